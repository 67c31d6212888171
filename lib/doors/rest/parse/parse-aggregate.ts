/**
 * `GET /{table}/aggregate?fn=&column=&<filters>` -> AggregateCommand (docs/querying.md, "Aggregate").
 * In: the table and the query parameters. Out: one of five functions over a resolved column.
 * Never: lets a function name or column reach SQL unchecked; sum/avg of a non-numeric column is a
 * 400 here, not a PostgreSQL error.
 */
import type { AggregateFn, AggregateList, Condition } from '../../../command/command';
import { GatewayError } from '../../../errors/gateway-error';
import type { Column, Table } from '../../../schema/schema-types';
import { countFilters, parseFilterParameter, parseSearch, reservedParameters } from './parse-list';
import { checkLimit } from '../../shared/request-limits';
import { clip, resolveColumnParameter } from '../../shared/resolve-names';
import { aggregateInputProblem } from '../../shared/aggregate-input';
import { none, unpaged } from './unpaged';

export const aggregateFns: readonly AggregateFn[] = ['count', 'sum', 'avg', 'min', 'max'];
/** The aggregate route's own parameters (the description documents them too: rest-door.ts). */
export const aggregateParameters = ['fn', 'column', 'search', 'search_columns'] as const;
const own = aggregateParameters;
type Own = (typeof own)[number];
const notFilters: ReadonlySet<string> = new Set([...own, ...reservedParameters]);

export function parseAggregate(table: Table, query: readonly (readonly [string, string])[]): AggregateList {
  const given = new Map<Own, string>();
  const filters: Condition[] = [];
  checkLimit('filters', countFilters(query, notFilters), 'filter parameters');
  for (const [key, raw] of query) {
    if ((own as readonly string[]).includes(key)) {
      if (given.has(key as Own)) throw new GatewayError('PARSE_ERROR', `The \`${key}\` parameter is given more than once.`);
      given.set(key as Own, raw);
      continue;
    }
    if ((reservedParameters as readonly string[]).includes(key)) {
      throw new GatewayError('PARSE_ERROR', `\`${key}\` is not a parameter of an aggregate.`, { hint: 'An aggregate accepts fn, column, filters, search and search_columns.' });
    }
    filters.push(parseFilterParameter(table, key, raw));
  }

  const fnText = given.get('fn');
  if (fnText === undefined) throw new GatewayError('PARSE_ERROR', 'An aggregate needs `fn`.', { hint: `fn is one of ${aggregateFns.join(', ')}.` });
  if (!(aggregateFns as readonly string[]).includes(fnText)) {
    throw new GatewayError('PARSE_ERROR', `Unknown aggregate function \`${clip(fnText)}\`.`, { hint: `fn is one of ${aggregateFns.join(', ')}.` });
  }
  const fn = fnText as AggregateFn;
  const columnText = given.get('column');
  let column: Column | null = null;
  if (fn === 'count') {
    if (columnText !== undefined) throw new GatewayError('PARSE_ERROR', '`fn=count` counts rows and takes no `column`.', { hint: 'To count non-null values, filter with column.is_null=false.' });
  } else {
    if (columnText === undefined) throw new GatewayError('PARSE_ERROR', `\`fn=${fn}\` needs a \`column\`.`);
    column = resolveColumnParameter(table, columnText, 'column');
    const problem = aggregateInputProblem(fn, column);
    if (problem !== undefined) throw new GatewayError('PARSE_ERROR', `\`fn=${fn}\`: ${problem}.`, { details: { column: column.name, type: column.type } });
  }
  // A read answered with its aggregate: the rows are those its conditions and search select, the
  // page fields their defaults (the allow-list pattern names none of them).
  return Object.freeze({
    kind: 'read',
    table,
    root: Object.freeze({ table, items: none, explicitSelect: false, where: Object.freeze(filters), order: none, limit: 0, offset: 0 }),
    schema: table.schema,
    ...unpaged,
    search: parseSearch(table, given.get('search'), given.get('search_columns')) ?? undefined,
    aggregate: Object.freeze({ fn, column }),
  });
}
