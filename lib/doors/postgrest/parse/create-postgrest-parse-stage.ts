/**
 * parse, PostgREST dialect: GatewayRequest -> Command (docs/postgrest-dialect.md).
 * In: the digested request, the schema cache, the config. Out: the same Command vocabulary as the
 * default parse stage (a `read` for GET / HEAD /{table}), for the same policy, allow-list,
 * compile and execute stages. Never: builds SQL, or lets an unresolved name through.
 *
 * Routes below the mount point, dispatched here to one file each:
 *   GET    /                     the OpenAPI document: answered before parse (lib/create-describe-route.ts);
 *                                here only as a fallback (PGRST126)
 *   GET    /{table}, HEAD        parse-postgrest-read.ts
 *   POST   /{table}, PATCH, PUT, DELETE   parse-postgrest-write.ts
 *   GET    /rpc/{fn}, POST, HEAD parse-postgrest-rpc.ts
 * The schema comes from Accept-Profile (GET, HEAD) or Content-Profile (the others), among
 * `schemas`; tables are resolved in it alone.
 */
import type { Command } from '../../../command/command';
import { GatewayError } from '../../../errors/gateway-error';
import { suggestName, tableCandidates } from '../../../errors/name-hint';
import { PostgrestError } from '../postgrest-error';
import type { ParseContext, Stages } from '../../../pipeline/stage-types';
import type { SchemaCache, Table } from '../../../schema/schema-types';
import { checkExplainAccess } from '../../shared/check-explain-access';
import { parsePostgrestRead, type ReadContext } from './parse-postgrest-read';
import { parsePostgrestRpc } from './parse-postgrest-rpc';
import { parsePostgrestWrite } from './parse-postgrest-write';
import { clip } from './parse-select';
import { selectSchema } from './postgrest-headers';

export function createPostgrestParseStage(): Stages['parse'] {
  return function parse(ctx: ParseContext): Command {
    const { request, schema, config } = ctx;
    const profile = selectSchema(request, config.schemas);
    const context: ReadContext = { schema, config, profile };
    const [first, second, third] = request.segments;
    const method = request.method;
    if (first === undefined || (first === '' && second === undefined)) {
      if (method !== 'GET' && method !== 'HEAD') throw unsupported(method);
      throw new PostgrestError('PGRST126', 'Open API is disabled', { hint: 'The OpenAPI document is served at GET / and GET /openapi.json (docs/postgrest-dialect.md, "OpenAPI").' });
    }
    if (first === 'rpc' && second !== undefined && third === undefined) {
      if (method !== 'GET' && method !== 'HEAD' && method !== 'POST') throw unsupported(method);
      return explained(parsePostgrestRpc(second, request, context), ctx);
    }
    if (second !== undefined) throw new PostgrestError('PGRST125', `Invalid path specified in request URL`, { details: `/${clip(request.segments.join('/'), 120)}` });
    const table = resolveTable(schema, profile, first, config.postgrestVersion);
    switch (method) {
      case 'GET':
      case 'HEAD': {
        const command = parsePostgrestRead(table, request, context);
        // The plan media type is the explain route's: same switch, same callers (docs/configuration.md, explain_*).
        return command.media === 'plan' ? explainable(command, ctx) : command;
      }
      case 'POST':
      case 'PATCH':
      case 'PUT':
      case 'DELETE':
        return explained(parsePostgrestWrite(table, request, context), ctx);
      default:
        throw unsupported(method);
    }
  };
}

/** A write or a call answered with its plan: the explain route's rule applies (explainable). */
function explained(command: Command, ctx: ParseContext): Command {
  const answer = command.kind === 'insert' || command.kind === 'update' || command.kind === 'delete' || command.kind === 'rpc' ? command.answer : undefined;
  return answer?.plan ? explainable(command, ctx) : command;
}

/** The plan media type is the explain route's: same switch, same callers (docs/configuration.md, explain_*). */
function explainable(command: Command, ctx: ParseContext): Command {
  if (!ctx.config.explainEnabled) throw new PostgrestError('PGRST107', 'None of these media types are available: application/vnd.pgrst.plan', { status: 406, hint: 'explain_enabled = false on this gateway.' });
  checkExplainAccess(ctx);
  return command;
}

function unsupported(method: string): GatewayError {
  return new PostgrestError('PGRST117', `Unsupported HTTP method: ${clip(method, 16)}`);
}

function resolveTable(schema: SchemaCache, profile: string, name: string, version: 12 | 13): Table {
  const table = schema.tables.find((t) => t.schema === profile && t.name === name);
  if (table) return table;
  if (version === 12) throw new PostgrestError('42P01', `relation "${clip(`${profile}.${name}`)}" does not exist`);
  const candidates = tableCandidates(() => schema.tables.filter((t) => t.schema === profile).map((t) => [t.name, t] as const));
  throw new PostgrestError('PGRST205', `Could not find the table '${clip(`${profile}.${name}`)}' in the schema cache`, suggestName(name, candidates, (near) => `Perhaps you meant the table '${profile}.${near}'`));
}
