/**
 * `POST /{table}` -> InsertCommand.
 * In: a JSON object (one row) or an array of objects (a batch), optional upsert headers and
 * `returning`. Out: the columns named by any row, the body text to bind as one parameter, its
 * rows as key -> value text (for the policy), the conflict target. Never: hands JS-parsed values on (the text is bound), or accepts a batch over
 * `max_batch_size` (413) or a key that is not a writable column (400, `details.row` in batches).
 */
import type { InsertCommand } from '../../../command/command';
import type { ResolvedConfig } from '../../../pipeline/resolved-config';
import { GatewayError } from '../../../errors/gateway-error';
import type { GatewayRequest } from '../../../pipeline/gateway-request';
import type { Table } from '../../../schema/schema-types';
import { parseJsonBody } from '../../shared/parse-json-body';
import { parseOnConflict } from '../../shared/parse-on-conflict';
import { parsePrefer } from '../../shared/parse-prefer';
import { parseReturning } from './parse-returning';
import { resolveBodyColumns } from '../../shared/resolve-body-columns';
import { batchRowsOf, bodyRowsOf } from '../../shared/body-rows';

export function parseInsert(table: Table, request: GatewayRequest, config: ResolvedConfig): InsertCommand {
  const body = parseJsonBody(request);
  const { batch, rows } = batchRowsOf(body.value, config.maxBatchSize);
  const columns = resolveBodyColumns(table, rows, batch);
  const preferences = parsePrefer(request.headers.prefer);
  // Missing keys in a batch row become NULL (PostgREST's default). Filling them with the column
  // default would need per-row DEFAULT, which INSERT ... SELECT cannot express: refuse, not ignore.
  if (preferences.get('missing') === 'default') {
    throw new GatewayError('PARSE_ERROR', '`Prefer: missing=default` is not supported: a key missing from a batch row is stored as NULL.', {
      hint: 'Send the value in every row, or leave the column out of every row to get its default.',
    });
  }
  const onConflict = parseOnConflict(table, request.headers, preferences);
  const { returning, explicitReturning } = parseReturning(table, request.query);
  return Object.freeze({
    kind: 'insert',
    table,
    columns,
    body: body.text,
    rows: bodyRowsOf(body.text, batch),
    batch,
    rowCount: rows.length,
    returning,
    explicitReturning,
    onConflict,
  });
}
