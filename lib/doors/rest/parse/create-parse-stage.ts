/**
 * parse: GatewayRequest -> Command.
 * In: the digested request and the schema cache. Out: a frozen, kind-tagged command whose every
 * table and column is a schema-cache object. Never: builds SQL, or lets an unresolved name through.
 *
 * Routes (docs/querying.md, docs/writing.md, docs/relations.md, docs/rpc.md), below the mount point:
 *   /{table}                GET list, POST insert
 *   /{table}/aggregate      GET aggregate
 *   /{table}/_explain       GET explain (404 when explain_enabled = false; 403 for callers
 *                           explain_roles / explain_scopes do not name, outside dev mode)
 *   /{table}/:id            GET get, PATCH update, DELETE delete
 *   /{table}/:id/{child}    GET the child rows of one parent row
 *   /rpc/{function}         POST a function call
 *   /_rpc/contracts         GET the callable function signatures
 */
import type { Command } from '../../../command/command';
import { GatewayError } from '../../../errors/gateway-error';
import type { ParseContext, Stages } from '../../../pipeline/stage-types';
import { checkExplainAccess } from '../../shared/check-explain-access';
import type { CursorCodec } from '../../../pipeline/cursor-codec';
import { parseAggregate } from './parse-aggregate';
import { parseChildren } from './parse-children';
import { parseDelete } from './parse-delete';
import { parseExplain } from './parse-explain';
import { parseGet } from './parse-get';
import { parseInsert } from './parse-insert';
import { parseList } from './parse-list';
import { preferredFormat } from './parse-accept';
import { parseContracts, parseRpc } from './parse-rpc';
import { parseUpdate } from './parse-update';
import { resolveTable } from '../../shared/resolve-names';

export function createParseStage(cursors: CursorCodec): Stages['parse'] {
  return function parse(ctx: ParseContext): Command {
    const { request, schema, config } = ctx;
    const [first, second, third] = request.segments;
    const method = request.method === 'HEAD' ? 'GET' : request.method;
    // Exports are lists (docs/querying.md, "Exports"); any other route refuses them (406).
    const accept = preferredFormat(request.headers['accept']);
    const isList = method === 'GET' && first !== 'rpc' && first !== '_rpc' && request.segments.length !== 2 && request.segments.length <= 3;
    if (accept !== 'json' && !isList) throw new GatewayError('NOT_ACCEPTABLE', `This route answers application/json only, not ${accept === 'csv' ? 'text/csv' : 'application/x-ndjson'}.`, { hint: 'Exports are GET /{table} and GET /{parent}/:id/{child}.' });
    // The function routes come first: `rpc` and `_rpc` are never table names here.
    if (first === 'rpc' && second !== undefined && third === undefined) {
      if (method !== 'POST') throw methodNotAllowed(request.method, ['POST']);
      return parseRpc(schema, second, request, config);
    }
    if (first === '_rpc' && second === 'contracts' && third === undefined) {
      if (method !== 'GET') throw methodNotAllowed(request.method, ['GET', 'HEAD']);
      return parseContracts(schema);
    }
    if (first === undefined || first === 'rpc' || first === '_rpc' || request.segments.length > 3) {
      throw new GatewayError('NOT_FOUND', 'No such route.', { hint: 'Data routes are /{table}, /{table}/:id and /{table}/:id/{child}; functions are POST /rpc/{function}.' });
    }
    const table = resolveTable(schema, first);

    if (second === undefined) {
      if (method === 'GET') return parseList(table, request.query, config, cursors, null, accept);
      if (method === 'POST') return parseInsert(table, request, config);
      throw methodNotAllowed(request.method, ['GET', 'HEAD', 'POST']);
    }
    if (third === undefined && (second === 'aggregate' || second === '_explain')) {
      if (second === '_explain' && !config.explainEnabled) throw new GatewayError('NOT_FOUND', 'The explain route is turned off (explain_enabled = false).');
      if (method !== 'GET') throw methodNotAllowed(request.method, ['GET', 'HEAD']);
      if (second === '_explain') checkExplainAccess(ctx);
      return second === 'aggregate' ? parseAggregate(table, request.query) : parseExplain(table, request.query, config, cursors);
    }
    if (third === undefined) {
      if (method === 'GET') return parseGet(table, request, config.tenantColumn);
      if (method === 'PATCH') return parseUpdate(table, request, config);
      if (method === 'DELETE') return parseDelete(table, request, config.tenantColumn);
      throw methodNotAllowed(request.method, ['GET', 'HEAD', 'PATCH', 'DELETE']);
    }
    if (method !== 'GET') throw methodNotAllowed(request.method, ['GET', 'HEAD']);
    return parseChildren(schema, table, request, config, cursors, accept);
  };
}

function methodNotAllowed(method: string, allowed: readonly string[]): GatewayError {
  return new GatewayError('METHOD_NOT_ALLOWED', `${method} is not supported on this route.`, { headers: { Allow: allowed.join(', ') } });
}
