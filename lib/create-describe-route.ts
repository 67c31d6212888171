/**
 * `GET /{mount}/` and `GET /{mount}/openapi.json`: the OpenAPI 3.1 document of what the caller may
 * use (docs/openapi.md), and the descriptions `tablegate openapi` / `tablegate gen types` print.
 *
 * In: the auth stage (the caller is authenticated as for any request: no token under
 * `require_auth` is a 401), the policies, the function allow-list. Out: the document, built by
 * lib/describe/ from the schema cache and the caller's `CallerAccess`, cached per schema cache
 * object (a reload makes a new one) and per distinct set of permissions, so callers with the same
 * permissions share one serialized document. Never: runs SQL, or describes what the caller may
 * not read.
 */
import { createHash } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { fullAccess, type CallerAccess } from './describe/caller-access';
import { databaseTypes } from './describe/database-types';
import { openApiDocument } from './describe/openapi-document';
import type { ResolvedConfig } from './pipeline/resolved-config';
import { GatewayError } from './errors/gateway-error';
import { sendJson } from './http/send-error';
import type { DescribedGrammar } from './pipeline/door';
import type { GatewayRequest } from './pipeline/gateway-request';
import type { BaseContext, Stages } from './pipeline/stage-types';
import type { DbFunction, SchemaCache } from './schema/schema-types';
import type { AccessPolicy } from './stages/policy/access-policy';
import { describeAccess } from './stages/policy/describe-access';
import type { LegacyPolicy } from './stages/policy/legacy-policy';
import { version } from './version';

export interface DescribeRoute {
  /** GET or HEAD of `/` or `/openapi.json` (unless a table is named `openapi.json`). */
  matches(request: GatewayRequest, schema: SchemaCache): boolean;
  /** Authenticates the caller and sends its document. */
  respond(ctx: BaseContext, res: ServerResponse, mountPath: string): Promise<void>;
  /** The document for every table and column (no policy applied): `tablegate openapi`. */
  openApi(schema: SchemaCache, serverUrl: string): Record<string, unknown>;
  /** The TypeScript `Database` types for every table and column: `tablegate gen types`. */
  typeScript(schema: SchemaCache): string;
}

export function createDescribeRoute(deps: {
  readonly config: ResolvedConfig;
  /** The query grammar the mount's door documents (lib/pipeline/door.ts). */
  readonly grammar: DescribedGrammar;
  readonly auth: Stages['auth'];
  readonly access?: AccessPolicy | undefined;
  readonly legacy?: LegacyPolicy | undefined;
  readonly callable?: ((fn: DbFunction) => boolean) | undefined;
}): DescribeRoute {
  const { config } = deps;
  // Serialized documents by schema cache, then by mount path and permissions. A reload replaces
  // the cache object, so the old documents go with it.
  const documents = new WeakMap<SchemaCache, Map<string, string>>();
  const options = (schema: SchemaCache, access: CallerAccess, serverUrl: string) => ({
    schema,
    access,
    grammar: deps.grammar,
    ...(deps.callable ? { callable: deps.callable } : {}),
    config: {
      requireAuth: config.requireAuth,
      explainEnabled: config.explainEnabled,
      defaultLimit: config.defaultLimit,
      maxLimit: config.maxLimit,
      rpcRequireSchemaQualified: config.rpcRequireSchemaQualified,
    },
    serverUrl,
    version,
  });
  return {
    matches(request, schema) {
      if (request.method !== 'GET' && request.method !== 'HEAD') return false;
      const [first] = request.segments;
      if (request.segments.length === 0) return true;
      return request.segments.length === 1 && first === 'openapi.json' && !schema.tablesByName.has('openapi.json');
    },
    async respond(ctx, res, mountPath) {
      const identity = await deps.auth(ctx);
      // Nothing narrows or shapes the document: a parameter is a mistake, not something to ignore.
      if (ctx.request.query.length > 0) {
        throw new GatewayError('PARSE_ERROR', 'The OpenAPI document takes no query parameters.', { details: { parameter: ctx.request.query[0]![0] } });
      }
      const access = describeAccess({ access: deps.access, legacy: deps.legacy }, identity);
      let bySchema = documents.get(ctx.schema);
      if (bySchema === undefined) documents.set(ctx.schema, (bySchema = new Map()));
      const key = `${mountPath}\u0000${permissionsKey(ctx.schema, access)}`;
      let text = bySchema.get(key);
      if (text === undefined) {
        text = JSON.stringify(openApiDocument(options(ctx.schema, access, mountPath)));
        // Bounded: a policy with many distinct permission sets must not grow it without end.
        if (bySchema.size >= 64) bySchema.clear();
        bySchema.set(key, text);
      }
      res.statusCode = 200;
      sendJson(res, text);
    },
    openApi(schema, serverUrl) {
      return openApiDocument(options(schema, fullAccess, serverUrl));
    },
    typeScript(schema) {
      return databaseTypes({ schema, access: fullAccess, ...(deps.callable ? { callable: deps.callable } : {}), rpcRequireSchemaQualified: config.rpcRequireSchemaQualified, version });
    },
  };
}

/** What the caller may do with every table and column, as a short hash: equal permissions, equal key. */
function permissionsKey(schema: SchemaCache, access: CallerAccess): string {
  if (access === fullAccess) return 'all';
  const hash = createHash('sha256');
  for (const table of schema.tables) {
    const granted = access(table);
    hash.update(`${table.oid}:`);
    if (granted === null) continue;
    hash.update([...granted.operations].sort().join(','));
    for (const c of table.columns) hash.update(`${granted.readable(c.name) ? 'r' : '-'}${granted.writable(c.name) ? 'w' : '-'}${granted.returnable(c.name) ? 'o' : '-'}`);
    hash.update(';');
  }
  return hash.digest('base64url');
}
