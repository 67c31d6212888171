/**
 * Expansions -> correlated subqueries evaluated per row inside the one statement of the request
 * (no follow-up queries: docs/relations.md, "How it is compiled").
 * In: the alias of the base row and a resolved Expansion. Out: one scalar expression whose value
 * is the related row as JSON (`to_json`, or NULL) or the related rows as a JSON array (`[]` when
 * none). Never: reads a table outside the caller's statement, so RLS applies to related rows as
 * to the main table. Whole rows are written `_e.*`: a bare `_e` would be a column `_e` of any
 * table in scope, the base table's included (docs/architecture.md, "Names the compiler writes").
 */
import type { Expansion } from '../../command/command';
import type { Column } from '../../schema/schema-types';
import { empty, ident, join, sql, type Sql } from '../../sql/sql';
import { compileCondition } from './compile-condition';

const x = sql`_x`;

/** The base row's columns the expansion correlates on (the FK columns, or the referenced key). */
export function correlatedColumns(expansion: Expansion): readonly Column[] {
  const { relation } = expansion;
  return relation.direction === 'forward' ? relation.foreignKey.columns : relation.foreignKey.referencedColumns;
}

export function compileExpansion(row: Sql, expansion: Expansion): Sql {
  const { relation } = expansion;
  const fk = relation.foreignKey;
  const [mine, theirs] = relation.direction === 'forward' ? [fk.columns, fk.referencedColumns] : [fk.referencedColumns, fk.columns];
  const on = join(
    [...mine.map((column, i) => sql`${x}.${ident(theirs[i]!.name)} = ${row}.${ident(column.name)}`), ...(expansion.rowFilters ?? []).map((c) => compileCondition(c, x, new Map()))],
    sql` AND `,
  );
  const target = relation.target;
  const columns = join(expansion.select.map((c) => sql`${x}.${ident(c.name)}`));
  const from = sql`FROM ${ident(target.schema, target.name)} AS ${x} WHERE ${on}`;
  if (relation.cardinality === 'one') {
    // LIMIT 1: a one-to-one reverse relation whose uniqueness is not enforced by a key of this
    // exact column set must still render one object, never fail with "more than one row".
    return sql`(SELECT to_json(_e.*) FROM (SELECT ${columns} ${from} LIMIT 1) AS _e)`;
  }
  // Children in primary-key order, so the array is stable between requests.
  const order = target.primaryKey.length ? sql` ORDER BY ${join(target.primaryKey.map((c) => sql`${x}.${ident(c.name)}`))}` : empty;
  return sql`(SELECT coalesce(json_agg(_e.*), '[]') FROM (SELECT ${columns} ${from}${order}) AS _e)`;
}

/** `<expansion> AS "<relation name>"` for each expansion: the key of the value in the row JSON. */
export function expansionColumns(row: Sql, expansions: readonly Expansion[]): Sql[] {
  return expansions.map((e) => sql`${compileExpansion(row, e)} AS ${ident(e.relation.name)}`);
}
