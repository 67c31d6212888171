/**
 * `PATCH /{table}/:id` -> UpdateCommand.
 * In: the key in the path and a JSON object of the columns to change. Out: those columns and the
 * body text to bind as one parameter. Never: accepts an empty object, an array, or a key that is
 * not a writable column (400 before any SQL).
 */
import type { UpdateCommand } from '../../../command/command';
import type { ResolvedConfig } from '../../../pipeline/resolved-config';
import { GatewayError } from '../../../errors/gateway-error';
import type { GatewayRequest } from '../../../pipeline/gateway-request';
import type { Table } from '../../../schema/schema-types';
import { parseJsonBody } from '../../shared/parse-json-body';
import { parseKey } from './parse-key';
import { parseReturning } from './parse-returning';
import { resolveBodyColumns } from '../../shared/resolve-body-columns';
import { bodyRowsOf } from '../../shared/body-rows';

export function parseUpdate(table: Table, request: GatewayRequest, config: ResolvedConfig): UpdateCommand {
  const key = parseKey(table, request.rawSegments[1] ?? '', config.tenantColumn);
  const body = parseJsonBody(request);
  if (typeof body.value !== 'object' || body.value === null || Array.isArray(body.value)) {
    throw new GatewayError('PARSE_ERROR', 'A PATCH body must be a JSON object of the columns to change.');
  }
  const columns = resolveBodyColumns(table, [body.value], false);
  if (columns.length === 0) {
    throw new GatewayError('PARSE_ERROR', 'The PATCH body names no column to change.', { hint: 'Send a JSON object such as {"status":"paid"}.' });
  }
  const { returning, explicitReturning } = parseReturning(table, request.query);
  return Object.freeze({ kind: 'update', table, key, columns, body: body.text, row: bodyRowsOf(body.text, false)[0]!, returning, explicitReturning });
}
