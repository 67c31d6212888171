/**
 * Keyset condition "rows after the cursor" for an ordering whose keys may mix directions and be
 * NULL. Orderings are ASC NULLS LAST / DESC NULLS FIRST (PostgreSQL's defaults, written out so
 * this condition and ORDER BY cannot disagree).
 */
import type { SortKey } from '../../command/command';
import type { Column } from '../../schema/schema-types';
import { ident, join, sql, type Sql } from '../../sql/sql';
import { assertComparable, compare } from './comparison-operator';
import { typedValue } from './typed-value';

// ORDER BY finds the type's default btree operator class by type, whatever the search_path; a
// type without one (xml, point) is refused before any SQL.
export function compileOrderBy(alias: Sql, order: readonly SortKey[]): Sql {
  for (const k of order) assertComparable(k.column, 'ordering', 'sort');
  return join(order.map((k) => sql`${alias}.${ident(k.column.name)} ${k.descending ? sql`DESC NULLS FIRST` : sql`ASC NULLS LAST`}`));
}

export function compileAfterCursor(alias: Sql, order: readonly SortKey[], values: readonly (string | null)[]): Sql {
  const cols = order.map((k) => sql`${alias}.${ident(k.column.name)}`);
  const sameDirection = order.every((k) => k.descending === order[0]?.descending);
  // A row comparison resolves each column's operator by name, unqualified: only for types whose
  // operators are pg_catalog's.
  const plainOperators = order.every((k) => k.column.operatorSchemas === undefined);
  if (sameDirection && plainOperators && order.every((k) => !k.column.nullable) && values.every((v) => v !== null)) {
    // Row comparison: one index range scan on a matching composite index.
    const op = order[0]?.descending ? sql`<` : sql`>`;
    return sql`(${join(cols)}) ${op} (${join(values.map((v, i) => typedValue(order[i]!.column, v!)))})`;
  }
  const branches: Sql[] = order.map((key, i) => {
    const equalBefore = order.slice(0, i).map((k, j) => equal(cols[j]!, k.column, values[j] ?? null));
    return join([...equalBefore, after(cols[i]!, key, values[i] ?? null)], sql` AND `);
  });
  return sql`(${join(branches.map((b) => sql`(${b})`), sql` OR `)})`;
}

// The values are the `::text` of the last row's keys; cast back to each key's type they compare
// exactly as the row did (composites, arrays and ranges included).
function equal(col: Sql, column: Column, v: string | null): Sql {
  return v === null ? sql`${col} IS NULL` : compare(column, col, '=', typedValue(column, v), 'cursor');
}

function after(col: Sql, key: SortKey, v: string | null): Sql {
  if (key.descending) return v === null ? sql`${col} IS NOT NULL` : compare(key.column, col, '<', typedValue(key.column, v), 'cursor');
  if (v === null) return sql`false`;
  const greater = compare(key.column, col, '>', typedValue(key.column, v), 'cursor');
  return key.column.nullable ? sql`(${greater} OR ${col} IS NULL)` : greater;
}
