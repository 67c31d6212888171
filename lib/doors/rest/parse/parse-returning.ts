/**
 * parseReturning: the query string of a write -> the columns the response returns.
 * In: the table and the query parameters. Out: `returning=c1,c2` resolved like `select` (unknown
 * column 400), or every column when absent (the policy stage narrows it to what the caller may
 * read). Never: accepts another query parameter silently (a typo must not change what is written).
 */
import { GatewayError } from '../../../errors/gateway-error';
import type { Column, Table } from '../../../schema/schema-types';
import { checkLimit } from '../../shared/request-limits';
import { clip, resolveColumn } from '../../shared/resolve-names';
import { splitList } from '../../shared/split-list';

export interface Returning {
  readonly returning: readonly Column[];
  readonly explicitReturning: boolean;
}

export function parseReturning(table: Table, query: readonly (readonly [string, string])[]): Returning {
  let text: string | undefined;
  for (const [key, value] of query) {
    if (key !== 'returning') {
      throw new GatewayError('PARSE_ERROR', `\`${clip(key)}\` is not a parameter of a write.`, { hint: 'Writes accept returning=<col>,<col>.' });
    }
    if (text !== undefined) throw new GatewayError('PARSE_ERROR', 'The `returning` parameter is given more than once.');
    text = value;
  }
  if (text === undefined) return Object.freeze({ returning: table.columns, explicitReturning: false });
  if (text === '*') return Object.freeze({ returning: table.columns, explicitReturning: true });
  const columns: Column[] = [];
  const names = splitList(text, 'returning');
  checkLimit('columnNames', names.length, 'names in `returning`');
  for (const name of names) {
    if (name === '') throw new GatewayError('PARSE_ERROR', 'The `returning` parameter has an empty column name.', { hint: 'Write returning=col1,col2.' });
    const column = resolveColumn(table, name, '`returning`');
    if (!columns.includes(column)) columns.push(column);
  }
  return Object.freeze({ returning: Object.freeze(columns), explicitReturning: true });
}
