/**
 * Whether an aggregate function takes a column of this type, decided from the discovered schema
 * before any SQL exists, so that `sum(oid)` or `max(xml)` is a 400 naming the column and its type
 * instead of PostgreSQL's 42883 "function does not exist" (docs/querying.md#aggregates). In: the
 * function and the column; out: why it cannot, or undefined.
 */
import type { Column } from '../../schema/schema-types';

export type AggregateName = 'count' | 'sum' | 'avg' | 'min' | 'max';

/**
 * The base types PostgreSQL's own sum() and avg() take (`\df sum` / `\df avg`; a domain counts as
 * its base type). Other numeric-category types (oid, the reg* types) have no sum, and money no avg.
 */
const summable: Readonly<Record<'sum' | 'avg', ReadonlySet<string>>> = {
  sum: new Set(['smallint', 'integer', 'bigint', 'real', 'double precision', 'numeric', 'money']),
  avg: new Set(['smallint', 'integer', 'bigint', 'real', 'double precision', 'numeric']),
};

export function aggregateInputProblem(fn: AggregateName, column: Column): string | undefined {
  if (fn === 'count') return undefined;
  if (fn === 'sum' || fn === 'avg') {
    // compareType is the base type's name without modifier; null only when the role may not name it.
    const base = column.compareType;
    if (column.category !== 'N' || (base !== null && !summable[fn].has(base))) return `${fn} needs a numeric column; \`${column.name}\` is ${column.type}`;
    return undefined;
  }
  if (column.type === 'json') return `column \`${column.name}\` is json, which has no ordering; store it as jsonb to use ${fn}`;
  if (column.comparisons?.ordering === false) return `${fn} needs an ordered type; \`${column.name}\` is ${column.type}, which has none`;
  return undefined;
}
