/**
 * Keyset condition "rows after the cursor" for an ordering whose keys may mix directions and be
 * NULL. Orderings are ASC NULLS LAST / DESC NULLS FIRST (PostgreSQL's defaults, written out so
 * this condition and ORDER BY cannot disagree).
 */
import type { SortKey } from '../../command/command';
import { ident, join, sql, type Sql } from '../../sql/sql';

export function compileOrderBy(alias: Sql, order: readonly SortKey[]): Sql {
  return join(order.map((k) => sql`${alias}.${ident(k.column.name)} ${k.descending ? sql`DESC NULLS FIRST` : sql`ASC NULLS LAST`}`));
}

export function compileAfterCursor(alias: Sql, order: readonly SortKey[], values: readonly (string | null)[]): Sql {
  const cols = order.map((k) => sql`${alias}.${ident(k.column.name)}`);
  const sameDirection = order.every((k) => k.descending === order[0]?.descending);
  if (sameDirection && order.every((k) => !k.column.nullable) && values.every((v) => v !== null)) {
    // Row comparison: one index range scan on a matching composite index.
    const op = order[0]?.descending ? sql`<` : sql`>`;
    return sql`(${join(cols)}) ${op} (${join(values.map((v) => sql`${v}`))})`;
  }
  const branches: Sql[] = order.map((key, i) => {
    const equalBefore = order.slice(0, i).map((_, j) => equal(cols[j]!, values[j] ?? null));
    return join([...equalBefore, after(cols[i]!, key, values[i] ?? null)], sql` AND `);
  });
  return sql`(${join(branches.map((b) => sql`(${b})`), sql` OR `)})`;
}

function equal(col: Sql, v: string | null): Sql {
  return v === null ? sql`${col} IS NULL` : sql`${col} = ${v}`;
}

function after(col: Sql, key: SortKey, v: string | null): Sql {
  if (key.descending) return v === null ? sql`${col} IS NOT NULL` : sql`${col} < ${v}`;
  if (v === null) return sql`false`;
  return key.column.nullable ? sql`(${col} > ${v} OR ${col} IS NULL)` : sql`${col} > ${v}`;
}
