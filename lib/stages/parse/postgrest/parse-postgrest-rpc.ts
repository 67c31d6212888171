/**
 * GET / POST /rpc/{function} in the PostgREST dialect: not served yet. Fails closed with
 * PostgREST's "not implemented" error (PGRST127) before any SQL
 * (docs/postgrest-dialect.md, "How the dialect is built").
 * In: the function name as written, the request, the context. Out: never returns. A later version
 * replaces this body with function calls (rpc commands), keeping the signature the dispatcher calls.
 */
import type { Command } from '../../../command/command';
import { PostgrestError } from '../../../errors/postgrest-error';
import type { GatewayRequest } from '../../../pipeline/gateway-request';
import type { ReadContext } from './parse-postgrest-read';
import { clip } from './parse-select';

export function parsePostgrestRpc(name: string, request: GatewayRequest, ctx: ReadContext): Command {
  void ctx;
  throw new PostgrestError('PGRST127', 'Feature not implemented', { details: `${request.method} /rpc/${clip(name, 64)}: function calls are not served by the postgrest dialect yet.` });
}
