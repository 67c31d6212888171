/**
 * Keyset condition "rows after the cursor" for an ordering whose keys may mix directions and be
 * NULL. Orderings are ASC NULLS LAST / DESC NULLS FIRST (PostgreSQL's defaults, written out so
 * this condition and ORDER BY cannot disagree); a list's order term with another placement, a JSON
 * path or an embedded level's field is refused (400), never ordered otherwise than it says. A
 * related term (`sort=user.name`) orders and compares by its value (compile-order-value.ts).
 */
import type { OrderTerm } from '../../command/command';
import { GatewayError } from '../../errors/gateway-error';
import type { Column } from '../../schema/schema-types';
import { join, sql, type Sql } from '../../sql/sql';
import { assertComparable, compare } from './comparison-operator';
import { mayBeMissing, orderValue } from './compile-order-value';
import { typedValue } from './typed-value';

// ORDER BY finds the type's default btree operator class by type, whatever the search_path; a
// type without one (xml, point) is refused before any SQL.
export function compileOrderBy(alias: Sql, order: readonly OrderTerm[]): Sql {
  for (const k of order) {
    if (k.embed !== null || k.field.path.length > 0 || (k.nulls !== null && k.nulls !== (k.descending ? 'first' : 'last'))) throw unsupportedTerm(k);
    assertComparable(k.field.column, 'ordering', 'sort');
  }
  return join(order.map((k, i) => sql`${orderValue(alias, k, String(i))} ${k.descending ? sql`DESC NULLS FIRST` : sql`ASC NULLS LAST`}`));
}

function unsupportedTerm(k: OrderTerm): GatewayError {
  return new GatewayError('PARSE_ERROR', `A list is sorted by its table's own columns or a related row's, nulls last ascending and first descending; \`${k.field.column.name}\` is not such a sort key.`, {
    hint: 'Sort by a column of the table or of a to-one relation, with its nulls in the default place.',
  });
}

export function compileAfterCursor(alias: Sql, order: readonly OrderTerm[], values: readonly (string | null)[]): Sql {
  const cols = order.map((k, i) => orderValue(alias, k, String(i)));
  const sameDirection = order.every((k) => k.descending === order[0]?.descending);
  // A row comparison resolves each column's operator by name, unqualified: only for types whose
  // operators are pg_catalog's.
  const plainOperators = order.every((k) => k.field.column.operatorSchemas === undefined);
  if (sameDirection && plainOperators && order.every((k) => !k.field.column.nullable && !mayBeMissing(k)) && values.every((v) => v !== null)) {
    // Row comparison: one index range scan on a matching composite index.
    const op = order[0]?.descending ? sql`<` : sql`>`;
    return sql`(${join(cols)}) ${op} (${join(values.map((v, i) => typedValue(order[i]!.field.column, v!)))})`;
  }
  const branches: Sql[] = order.map((key, i) => {
    const equalBefore = order.slice(0, i).map((k, j) => equal(cols[j]!, k.field.column, values[j] ?? null));
    return join([...equalBefore, after(cols[i]!, key, values[i] ?? null)], sql` AND `);
  });
  return sql`(${join(branches.map((b) => sql`(${b})`), sql` OR `)})`;
}

// The values are the `::text` of the last row's keys; cast back to each key's type they compare
// exactly as the row did (composites, arrays and ranges included).
function equal(col: Sql, column: Column, v: string | null): Sql {
  return v === null ? sql`${col} IS NULL` : compare(column, col, '=', typedValue(column, v), 'cursor');
}

function after(col: Sql, key: OrderTerm, v: string | null): Sql {
  const { column } = key.field;
  if (key.descending) return v === null ? sql`${col} IS NOT NULL` : compare(column, col, '<', typedValue(column, v), 'cursor');
  if (v === null) return sql`false`;
  const greater = compare(column, col, '>', typedValue(column, v), 'cursor');
  return column.nullable || mayBeMissing(key) ? sql`(${greater} OR ${col} IS NULL)` : greater;
}
