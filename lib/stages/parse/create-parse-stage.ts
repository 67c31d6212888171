/**
 * parse: GatewayRequest -> Command.
 * In: the digested request and the schema cache. Out: a frozen, kind-tagged command whose every
 * table and column is a schema-cache object. Never: builds SQL, or lets an unresolved name through.
 */
import type { Command } from '../../command/command';
import { GatewayError } from '../../errors/gateway-error';
import type { ParseContext, Stages } from '../stage-types';
import type { CursorCodec } from './cursor-codec';
import { parseKey } from './parse-key';
import { parseList, parseSelect } from './parse-list';
import { resolveTable } from './resolve-names';

/** Path words that are routes of their own rather than `:id` values (gateway spec, Endpoints). */
const reservedSubpaths = new Set(['aggregate', '_explain']);

export function createParseStage(cursors: CursorCodec): Stages['parse'] {
  return function parse(ctx: ParseContext): Command {
    const { request, schema, config } = ctx;
    const [first, second, third] = request.segments;
    if (first === undefined || first === '' || first === 'rpc' || first === '_rpc') {
      throw new GatewayError('NOT_FOUND', 'No such route.', { hint: 'Data routes are /{table} and /{table}/:id.' });
    }
    const table = resolveTable(schema, first);
    if (request.segments.length === 1) {
      requireMethod(request.method, ['GET', 'HEAD']);
      return parseList(table, request.query, config, cursors);
    }
    if (second === undefined || request.segments.length > 2 || third !== undefined || reservedSubpaths.has(second)) {
      throw new GatewayError('NOT_FOUND', 'No such route.', { hint: 'Data routes are /{table} and /{table}/:id.' });
    }
    requireMethod(request.method, ['GET', 'HEAD']);
    let selectText: string | undefined;
    for (const [key, value] of request.query) {
      if (key !== 'select') throw new GatewayError('PARSE_ERROR', `\`${key}\` is not a parameter of a single-row read.`, { hint: 'A single-row read accepts select.' });
      if (selectText !== undefined) throw new GatewayError('PARSE_ERROR', 'The `select` parameter is given more than once.');
      selectText = value;
    }
    return Object.freeze({
      kind: 'get',
      table,
      select: parseSelect(table, selectText),
      explicitSelect: selectText !== undefined,
      key: parseKey(table, request.rawSegments[1] ?? ''),
    });
  };
}

function requireMethod(method: string, allowed: readonly string[]): void {
  if (!allowed.includes(method)) {
    throw new GatewayError('METHOD_NOT_ALLOWED', `${method} is not supported on this route.`, { headers: { Allow: allowed.join(', ') } });
  }
}
