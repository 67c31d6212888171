/**
 * A list's or single row's embeds (`expand`) -> correlated subqueries evaluated per row inside the
 * one statement of the request (no follow-up queries: docs/relations.md, "How it is compiled").
 * In: the alias of the base row and an embed of a whole related table by one foreign key (the
 * embeds a flat read takes, command.ts; any other is a 400, never compiled as less than it
 * says). Out: one scalar expression whose value
 * is the related row as JSON (`to_json`, or NULL) or the related rows as a JSON array (`[]` when
 * none). Never: reads a table outside the caller's statement, so RLS applies to related rows as
 * to the main table. Whole rows are written `_e.*`: a bare `_e` would be a column `_e` of any
 * table in scope, the base table's included (docs/architecture.md, "Names the compiler writes").
 */
import type { Embed, SelectItem } from '../../command/command';
import { GatewayError } from '../../errors/gateway-error';
import type { Column, Relation } from '../../schema/schema-types';
import { empty, ident, join, sql, type Sql } from '../../sql/sql';
import { compileCondition } from './compile-condition';

const x = sql`_x`;

/** The base row's columns the expansion correlates on (the FK columns, or the referenced key). */
export function correlatedColumns(expansion: Embed): readonly Column[] {
  const relation = relationOf(expansion);
  return relation.direction === 'forward' ? relation.foreignKey.columns : relation.foreignKey.referencedColumns;
}

/** The embed's foreign key relation, or a 400 for an embed a flat read does not take. */
function relationOf(e: Embed): Relation {
  const { node } = e;
  const whole = node.where.length === 0 && node.order.length === 0 && node.limit === null && node.offset === 0 && !e.inner && !e.spread;
  const plain = node.items.length > 0 && node.items.every((i) => i.kind === 'field' && i.key === i.field.column.name && i.field.path.length === 0 && i.cast === null && i.aggregate === null && i.resultCast === null);
  if (e.link.kind !== 'fk' || !whole || !plain || e.cardinality !== e.link.relation.cardinality) {
    throw new GatewayError('PARSE_ERROR', `\`${e.key}\` cannot be embedded in a list or a single row: an expansion is a whole related table by one foreign key.`, { hint: 'Expand the relation by its name, without conditions, order or casts.' });
  }
  return e.link.relation;
}

export function compileExpansion(row: Sql, expansion: Embed): Sql {
  const relation = relationOf(expansion);
  const fk = relation.foreignKey;
  const [mine, theirs] = relation.direction === 'forward' ? [fk.columns, fk.referencedColumns] : [fk.referencedColumns, fk.columns];
  const on = join(
    [...mine.map((column, i) => sql`${x}.${ident(theirs[i]!.name)} = ${row}.${ident(column.name)}`), ...(expansion.node.rowFilters ?? []).map((c) => compileCondition(c, x, new Map()))],
    sql` AND `,
  );
  const target = relation.target;
  const columns = join(expansion.node.items.map((i) => sql`${x}.${ident(i.kind === 'field' ? i.field.column.name : '')}`));
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

/**
 * The select list of a page or a single row over `row`: each plain column (`row."name"`), each
 * embed `<expansion> AS "<key>"` (the relation's name: the key of the value in the row JSON). An
 * item a page does not take (a cast, a JSON path, an output key, an aggregate) is a 400, never
 * compiled as less than it says.
 */
export function flatColumns(row: Sql, items: readonly SelectItem[]): Sql[] {
  return items.map((i) => (i.kind === 'embed' ? sql`${compileExpansion(row, i.embed)} AS ${ident(i.embed.key)}` : sql`${row}.${ident(plainColumn(i).name)}`));
}

/** The column of a plain field item (its name as its key, no path, cast or aggregate); else a 400. */
export function plainColumn(item: Exclude<SelectItem, { kind: 'embed' }>): Column {
  if (item.kind === 'field' && item.key === item.field.column.name && item.field.path.length === 0 && item.cast === null && item.aggregate === null && item.resultCast === null) return item.field.column;
  throw new GatewayError('PARSE_ERROR', `\`${item.key}\` cannot be selected in a page or a single row: select columns by their names.`);
}
