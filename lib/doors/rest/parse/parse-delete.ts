/**
 * `DELETE /{table}/:id` -> DeleteCommand.
 * In: the key in the path and optional `returning`. Out: the key and the columns to return
 * (rendered only when `returning` was given; otherwise the response is 204).
 */
import type { DeleteCommand } from '../../../command/command';
import type { GatewayRequest } from '../../../pipeline/gateway-request';
import type { Table } from '../../../schema/schema-types';
import { parseKey } from './parse-key';
import { parseReturning } from './parse-returning';

export function parseDelete(table: Table, request: GatewayRequest, tenantColumn?: string): DeleteCommand {
  const key = parseKey(table, request.rawSegments[1] ?? '', tenantColumn);
  const { returning, explicitReturning } = parseReturning(table, request.query);
  return Object.freeze({ kind: 'delete', table, key, returning, explicitReturning });
}
