/**
 * POST / PATCH / PUT / DELETE /{table} in the PostgREST dialect: not served yet. Fails closed with
 * PostgREST's "not implemented" error (PGRST127) before any SQL, so no write can run through a
 * half-built path (docs/postgrest-dialect.md, "How the dialect is built").
 * In: the table (resolved in the request's schema), the request, the context. Out: never returns.
 * A later version replaces this body with the writes (insert, update, delete, upsert commands
 * built from the request), keeping the signature the dispatcher calls.
 */
import type { Command } from '../../../command/command';
import { PostgrestError } from '../../../errors/postgrest-error';
import type { GatewayRequest } from '../../../pipeline/gateway-request';
import type { Table } from '../../../schema/schema-types';
import type { ReadContext } from './parse-postgrest-read';

export function parsePostgrestWrite(table: Table, request: GatewayRequest, ctx: ReadContext): Command {
  void ctx;
  throw new PostgrestError('PGRST127', 'Feature not implemented', { details: `${request.method} /${table.name}: writes are not served by the postgrest dialect yet.` });
}
