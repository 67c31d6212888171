/**
 * `PATCH /{table}` with a JSON array (docs/writing.md, "Bulk updates"): each row carries its
 * primary key and the values to set, and becomes the single request `PATCH /{table}/:key` with the
 * rest of the row as its body, checked as that request; together they run as ONE statement
 * (`oneStatement`: lib/run-expansion.ts, compile-bulk-update.ts). In: the table, the body text, the
 * query (`returning`) and `Prefer`. Out: the operations and how their answers make one response.
 * Never: accepts a row without its whole key (400, `details.row`), more rows than
 * `max_batch_size` (413), or applies part of the array: a row no visible row matches fails the
 * whole update (404) unless `Prefer: missing=ignore` skips it, and reports it in `missing`.
 */
import { GatewayError } from '../../../errors/gateway-error';
import { locatedError } from '../../../errors/located-error';
import type { Expansion, OperationAnswer } from '../../../pipeline/door';
import type { GatewayRequest } from '../../../pipeline/gateway-request';
import type { ResolvedConfig } from '../../../pipeline/resolved-config';
import type { Table } from '../../../schema/schema-types';
import { parseJsonBody } from '../../shared/parse-json-body';
import { parsePrefer } from '../../shared/parse-prefer';
import { splitJsonArray } from '../../shared/split-json-array';
import { splitJsonObject } from '../../shared/split-json-object';
import { toOperation } from './operation-template';
import { answerData } from './answer-data';

export function bulkUpdate(table: Table, request: GatewayRequest, config: ResolvedConfig): Expansion {
  const body = parseJsonBody(request);
  const rows = body.value as unknown[];
  if (rows.length === 0) throw new GatewayError('PARSE_ERROR', 'A bulk update needs at least one row.');
  if (rows.length > config.maxBatchSize) {
    throw new GatewayError('PAYLOAD_TOO_LARGE', `The bulk update has ${rows.length} rows; at most ${config.maxBatchSize} are accepted (max_batch_size).`, {
      details: { rows: rows.length, max_batch_size: config.maxBatchSize },
      hint: 'Split it into several requests.',
    });
  }
  if (table.primaryKey.length === 0) throw new GatewayError('NOT_FOUND', `Table \`${table.name}\` has no primary key, so its rows cannot be updated by key.`);
  const missing = parsePrefer(request.headers.prefer).get('missing');
  if (missing !== undefined && missing !== 'ignore' && missing !== 'error') {
    throw new GatewayError('PARSE_ERROR', `\`Prefer: missing=${missing.slice(0, 32)}\` is not supported on a bulk update; use missing=ignore or missing=error.`);
  }
  const texts = splitJsonArray(body.text);
  const operations = rows.map((row, i) => {
    try {
      if (typeof row !== 'object' || row === null || Array.isArray(row)) throw new GatewayError('PARSE_ERROR', 'Each row of a bulk update is a JSON object with the primary key and the columns to change.');
      const entries = new Map(splitJsonObject(texts[i]!));
      const key = table.primaryKey.map((column) => {
        const text = entries.get(column.name);
        entries.delete(column.name);
        return keyText(table, column.name, text);
      });
      return toOperation(
        {
          method: 'PATCH',
          segments: [table.name, key.join(',')],
          rawSegments: [encodeURIComponent(table.name), key.map((k) => encodeURIComponent(k)).join(',')],
          query: request.query,
          body: { row: [...entries].map(([k, v]) => [k, { text: v }] as const) },
          headers: {},
          where: { row: i },
        },
        request,
        config.maxRequestBodyBytes,
      );
    } catch (err) {
      if (err instanceof GatewayError) throw locatedError(err, { row: i }, `Row ${i} of the bulk update`);
      throw err;
    }
  });
  return Object.freeze({
    operations,
    skipsNotFound: missing === 'ignore',
    oneStatement: true,
    answer(answers: readonly (OperationAnswer | undefined)[]): OperationAnswer {
      const data: string[] = [];
      const skipped: number[] = [];
      answers.forEach((answer, i) => {
        if (answer === undefined) return void skipped.push(i);
        const rowData = answerData(answer);
        if (rowData !== undefined) data.push(...(rowData.startsWith('[') ? splitJsonArray(rowData) : [rowData]));
      });
      const count = answers.length - skipped.length;
      return { status: 200, body: `{"data":[${data.join(',')}],"count":${count}${skipped.length > 0 ? `,"missing":[${skipped.join(',')}]` : ''}}` };
    },
  });
}

/** A key value as `:id` text: a JSON string's value, or a number's digits as written. */
function keyText(table: Table, column: string, text: string | undefined): string {
  if (text === undefined) throw new GatewayError('PARSE_ERROR', `The row has no \`${column}\`: each row of a bulk update carries the primary key of \`${table.name}\` (${table.primaryKey.map((c) => c.name).join(', ')}).`);
  if (text.startsWith('"')) return JSON.parse(text) as string;
  if (/^-?\d/.test(text)) return text;
  throw new GatewayError('PARSE_ERROR', `The key column \`${column}\` is a string or a number in each row.`);
}
