/**
 * The comparison operator for a column, as the schema cache resolved it for the column's type
 * (docs/querying.md#column-types): `=` for pg_catalog's (the SQL text of built-in types is
 * unchanged), `OPERATOR(extensions.=)` for an operator in a schema the request's search_path may
 * not reach (PostGIS, isn in `extensions`). In: a schema-cache column and an operator. Out: a
 * fragment, or a PARSE_ERROR (400) naming the column and its type when the type has no such
 * comparison at all (xml, point `=`): never SQL that PostgreSQL answers with 42883.
 */
import { GatewayError } from '../../errors/gateway-error';
import type { Column } from '../../schema/schema-types';
import { ident, sql, type Sql } from '../../sql/sql';

export type Comparison = '=' | '<>' | '<' | '<=' | '>' | '>=';

const plain: Record<Comparison, Sql> = { '=': sql`=`, '<>': sql`<>`, '<': sql`<`, '<=': sql`<=`, '>': sql`>`, '>=': sql`>=` };

/**
 * `left <op> right` with the column's operator; `<>` without one of its own is `NOT (left = right)`.
 * `what` names the request's operation (`eq`, `sort`) in the 400 for a type without the operator.
 */
export function compare(column: Column, left: Sql, op: Comparison, right: Sql, what: string = op): Sql {
  assertComparable(column, needOf(op), what);
  const schemas = column.operatorSchemas;
  if (schemas === undefined) return sql`${left} ${plain[op]} ${right}`;
  if (op === '<>' && schemas['<>'] === undefined && schemas['='] !== undefined) return sql`NOT (${left} ${operator(column, '=')} ${right})`;
  return sql`${left} ${operator(column, op)} ${right}`;
}

/** The operator alone (for `= ANY(...)`). */
export function operator(column: Column, op: Comparison): Sql {
  const schema = column.operatorSchemas?.[op];
  return schema === undefined ? plain[op] : sql`OPERATOR(${ident(schema)}.${plain[op]})`;
}

export function needOf(op: Comparison): 'equality' | 'inequality' | 'ordering' {
  return op === '=' ? 'equality' : op === '<>' ? 'inequality' : 'ordering';
}

/**
 * Refuses a comparison the column's type has none of: `equality` (=, in), `inequality` (<>),
 * `ordering` (<, >, sort, cursors). `what` names the operation in the message.
 */
export function assertComparable(column: Column, need: 'equality' | 'inequality' | 'ordering', what: string): void {
  if (column.comparisons === undefined || column.comparisons[need]) return;
  const missing = need === 'ordering' ? 'no ordering (no default btree operator class)' : `no \`${need === 'equality' ? '=' : '<>'}\` operator`;
  throw new GatewayError('PARSE_ERROR', `Column \`${column.name}\` is ${column.type}, which has ${missing}, so \`${what}\` cannot be applied to it.`, {
    hint: need === 'ordering' ? 'Sort and compare by another column, or by a column of a type that has a btree operator class.' : 'Filter on another column, or on a column of a type that has an equality operator.',
  });
}
