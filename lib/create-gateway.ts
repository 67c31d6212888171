/**
 * createGateway(options) -> Express Router. All the work that can be done once is done here
 * (helmet's pattern): options are validated and frozen, the stages are built, and discovery
 * starts; the per-request path only runs the pipeline.
 */
import { createHash, randomBytes } from 'node:crypto';
import type http from 'node:http';
import express from 'express';
import type { NextFunction, Request, Response, Router } from 'express';
import type pg from 'pg';
import createDebug from 'debug';
import type { GatewayOptions } from './config/gateway-options';
import type { ResolvedConfig } from './pipeline/resolved-config';
import { howToSet, resolveConfig } from './config/resolve-config';
import { checkRole } from './db/check-role';
import { warnAboutRowSecurity } from './db/check-row-security';
import { createDatabase, type Topology } from './db/create-database';
import { detectCitus } from './db/detect-citus';
import { createPool } from './db/create-pool';
import { DatabaseUnreachableError, toDatabaseUnreachable } from './db/database-unreachable-error';
import { createConnectionPolicy } from './db/connection/create-connection-policy';
import { guardPool } from './db/guard-pool';
import { inSearchPath } from './db/in-search-path';
import { searchPathOf } from './db/search-path';
import { trackCheckedOutClients } from './db/checked-out-clients';
import { NamedStatements } from './db/named-statements';
import { probeNamedStatements } from './db/probe-named-statements';
import { relationExists } from './db/relation-exists';
import { answerOptions } from './http/answer-options';
import { createAdminRouter } from './create-admin-router';
import { Drain } from './ops/drain';
import { Metrics, type ReloadReason } from './ops/metrics';
import { ExportStats } from './ops/export-stats';
import { createRateLimiter } from './ops/create-rate-limiter';
import { createTracing } from './ops/tracing/create-tracing';
import { version } from './version';
import { createDocsRouter } from './http/docs/create-docs-router';
import { loadSchema } from './schema/load-schema';
import { listenClientFactory } from './schema/reload-listener';
import { createSchemaWatcher, type SchemaWatcher } from './schema/schema-watcher';
import type { SchemaCache } from './schema/schema-types';
import { UnloadedTables } from './schema/unloaded-tables';
import { createAllowListStage } from './stages/allow-list/create-allow-list-stage';
import { loadFunctionAllowList } from './stages/allow-list/function-allow-list';
import { loadQueryAllowList } from './stages/allow-list/query-allow-list';
import { createAuthStage } from './stages/auth/create-auth-stage';
import { createCompileStage } from './stages/compile/create-compile-stage';
import { createExecuteStage } from './stages/execute/create-execute-stage';
import { createCursorCodec } from './pipeline/cursor-codec';
import { createReadRouting } from './create-read-routing';
import { createRequestHandler } from './create-request-handler';
import { createDescribeRoute } from './create-describe-route';
import { createNameVisibility, unloadedTable } from './create-name-visibility';
import { GatewayError } from './errors/gateway-error';
import { nothingVisible } from './errors/name-hint';
import { createRestDoor } from './doors/rest/rest-door';
import { UnknownTableError } from './doors/shared/resolve-names';
import { createPostgrestDoor } from './doors/postgrest/postgrest-door';
import { createChangeFeed, type ChangeFeed } from './doors/changes/change-feed';
import { ChangeFeedStats } from './ops/change-feed-stats';
import { GatewayConfigError } from './errors/gateway-config-error';
import type { Command } from './command/command';
import type { QueryAllowList } from './stages/allow-list/query-allow-list';
import { createMcpRouter } from './doors/mcp/create-mcp-router';
import { createRealtimeEndpoint, type RealtimeAttachOptions, type RealtimeAttachment, type RealtimeEndpoint } from './doors/realtime/create-realtime-endpoint';
import { renderResult } from './doors/rest/respond/render-result';
import { describeAccess } from './stages/policy/describe-access';
import type { Door } from './pipeline/door';
import { checkLegacyPolicyNames, checkPolicyNames } from './stages/policy/check-policy-names';
import { createPolicyStage } from './stages/policy/create-policy-stage';
import { loadAccessPolicy } from './stages/policy/load-access-policy';
import { loadLegacyPolicy } from './stages/policy/load-legacy-policy';
import { applyStageOverrides } from './pipeline/run-pipeline';
import type { Stages } from './pipeline/stage-types';
import type { Identity } from './pipeline/identity';
import { requestIdOf } from './http/digest-request';

const log = createDebug('tablegate:gateway');

export interface Gateway extends Router {
  /** Resolves once the schema is discovered and the database role is checked; rejects otherwise. */
  readonly ready: Promise<void>;
  /** GET /metrics and GET /health/internal, to mount where the host wants them. */
  readonly admin: Router;
  /**
   * The agents' door (docs/mcp.md): a Model Context Protocol endpoint (Streamable HTTP) whose tools
   * run the REST routes' commands as the token's caller. Mount it where the host wants it
   * (`tablegate serve`: /mcp); it answers 404 unless `mcp = { enabled = true }`.
   */
  readonly mcp: Router;
  /**
   * supabase-js Realtime (docs/postgrest-dialect.md, "Realtime"): attaches the WebSocket endpoint
   * realtime-js connects to (`{path}/websocket`, path default `/realtime/v1`) to the host's HTTP
   * server, over the change feed. Needs `change_feed.enabled` (else throws GatewayConfigError).
   * `close()` (or the gateway's) ends its sockets.
   */
  attachRealtime(server: http.Server, options?: RealtimeAttachOptions): RealtimeAttachment;
  /** Re-reads the schema (after a migration); requests keep using the old cache until it is done. */
  reloadSchema(): Promise<void>;
  /**
   * Drains (docs/scaling-out.md, "Shutting down"): new requests get 503 at once; requests in
   * flight, including those waiting for a pool connection, finish, or are answered 503 after
   * `drain_timeout_ms`; then schema reloading stops and the pool the gateway created is ended (a
   * pool passed in `options.pool` is left open), and so are the read replicas' pools.
   */
  close(): Promise<void>;
  /** The frozen, resolved configuration (secrets are non-enumerable). */
  readonly config: ResolvedConfig;
  /**
   * The OpenAPI 3.1 document of every table, column and callable function, no policy applied
   * (what `tablegate openapi` prints; callers get their own at `GET /{mount}/`, docs/openapi.md).
   * Waits for `ready`.
   */
  openApi(serverUrl?: string): Promise<Record<string, unknown>>;
  /**
   * The API explorer (docs/getting-started.md, "The API explorer"): an Express router serving an
   * interactive page of the caller's own OpenAPI document, read from `docs_api_url`. Served only
   * where the host mounts it (`tablegate serve` and `tablegate demo`: at /docs). Needs the optional
   * peer `swagger-ui-dist`: without it, reading this property throws GatewayConfigError.
   */
  readonly docs: Router;
  /** The TypeScript `Database` types of the same (`tablegate gen types`, docs/openapi.md). Waits for `ready`. */
  typeScript(): Promise<string>;
}

export function createGateway(options: GatewayOptions): Gateway {
  const config = resolveConfig(options);
  const cursors = createCursorCodec(cursorKey(config));
  const accessPolicy = loadAccessPolicy(config.access);
  const legacyPolicy = loadLegacyPolicy(config);
  // Read once: the allow-list stage and the OpenAPI document (what a caller may call) share it.
  const functionAllowList = config.rpcAllowlistPath === undefined ? undefined : loadFunctionAllowList(config.rpcAllowlistPath);
  const exportStats = new ExportStats();
  // The way in this mount serves (docs/architecture.md, "Doors"): its parse stage, its responder,
  // its hooks in execute and its grammar in the description. Picked once, here.
  const rest = createRestDoor({ cursors, exportStats });
  const queryAllowList = config.allowListPath === undefined ? undefined : loadQueryAllowList(config.allowListPath);
  const door: Door = config.dialect === 'postgrest' ? createPostgrestDoor(config.schemas, config.postgrestVersion) : rest;
  // The allow-list compares patterns spelled in the grammar of the door a request came through.
  const allowListFor = (d: Door): Stages['allowList'] =>
    createAllowListStage({
      ...(queryAllowList === undefined ? {} : { queries: queryAllowList, patternOf: d.pattern }),
      ...(functionAllowList === undefined ? {} : { functions: functionAllowList }),
    });
  const defaults: Stages = {
    auth: createAuthStage(config),
    parse: door.parse,
    policy: createPolicyStage({ ...(accessPolicy ? { access: accessPolicy } : {}), ...(legacyPolicy ? { legacy: legacyPolicy } : {}), ...(config.tenantColumn === undefined ? {} : { tenantColumn: config.tenantColumn }) }),
    allowList: allowListFor(door),
    compile: createCompileStage(),
    execute: createExecuteStage(door.execute),
  };
  // Decided once: with tracing off nothing on the request path is wrapped (docs/observability.md).
  const tracing = createTracing(config, version);
  const overridden = applyStageOverrides(defaults, options.stages);
  const withTracing = (given: Stages): Stages => (tracing ? tracing.stages(given) : given);
  const stages = withTracing(overridden);
  const nameVisibility = createNameVisibility({ access: accessPolicy, legacy: legacyPolicy }, functionAllowList);
  const describe = createDescribeRoute({ config, grammar: door.describes ?? { ...rest.describes!, batches: door.expand !== undefined }, auth: stages.auth, access: accessPolicy, legacy: legacyPolicy, callable: functionAllowList && ((fn) => functionAllowList.allows(fn)) });

  const ownsPool = options.pool === undefined;
  // The connection policy applies to the pool the gateway creates; resolveConfig refuses it beside a given pool.
  const connection = ownsPool ? createConnectionPolicy(config.databaseUrl!, options.gss) : undefined;
  // options.pool is typed structurally (db/pg-pool.ts); resolveConfig checked that it is a pg Pool.
  const pool: pg.Pool = (options.pool as pg.Pool | undefined) ?? createPool(config, connection!);
  // A host pool may have no 'error' listener of its own; one idle client lost in a database restart
  // would then crash the process (docs/security.md, "When the database restarts").
  const unguardPool = ownsPool ? undefined : guardPool(pool);
  const namedStatements = new NamedStatements(config.preparedStatements, howToSet(config, 'preparedStatements', false));
  // Filled in at `ready` (detectCitus): on Citus the context also travels by SET LOCAL (docs/citus.md).
  const topology: Topology = { distributed: false };
  const db = createDatabase(pool, { ...config, namedStatements, topology });
  // read_replica_urls: reads may go to replicas (docs/scaling-out.md); undefined without them.
  const replicas = createReadRouting(config, pool, db, options.gss, topology);
  const drain = new Drain();
  // Only the gateway's own pool: a drain that times out may cut its connections.
  const checkedOut = ownsPool ? trackCheckedOutClients(pool) : undefined;
  const limiter = config.rateLimit && createRateLimiter(config.rateLimit, pool, () => namedStatements.enabled);
  // mcp.calls_per_minute: each agent's own count of tool calls, in the rate limit's store (docs/mcp.md).
  const callsPerMinute = config.mcp?.enabled === true ? config.mcp.callsPerMinute : undefined;
  const agentLimiter = callsPerMinute === undefined ? undefined : createRateLimiter({ requests: callsPerMinute, windowS: 60, store: config.rateLimit?.store ?? 'memory' }, pool, () => namedStatements.enabled);
  let schema: SchemaCache | undefined;
  // An unknown table's 404 says when the database has it after all (docs/errors.md, NOT_FOUND).
  const unloaded = new UnloadedTables((name) => relationExists(pool, config.schemas, name));

  // Discoveries may overlap (reloadSchema beside a drift or LISTEN reload); only the latest started
  // may install its result, so an older, slower read of the catalog never overwrites a newer one.
  // One that is overtaken waits for the newer one before it returns, so that when reloadSchema()
  // resolves, a schema read after it was called is installed (not merely read and dropped).
  let generation = 0;
  let newest: Promise<void> = Promise.resolve();
  const discover = (reason: ReloadReason = 'manual'): Promise<void> => {
    const mine = ++generation;
    const run = readAndInstall(mine, reason).then(async (overtaken) => {
      if (overtaken) await newest.catch(() => undefined);
    });
    newest = run;
    return run;
  };
  /** Reads the catalog and installs it unless a newer discovery started meanwhile (then true). */
  const readAndInstall = async (mine: number, reason: ReloadReason): Promise<boolean> => {
    let loaded: SchemaCache;
    try {
      // Type names are read under the requests' search_path (db/in-search-path.ts).
      loaded = await loadSchema(inSearchPath(pool, searchPathOf(config.schemas, config.extraSearchPath)), config.schemas);
      if (accessPolicy) checkPolicyNames(accessPolicy, loaded);
      if (legacyPolicy) checkLegacyPolicyNames(legacyPolicy, loaded);
    } catch (err) {
      metrics.recordReload(reason, 'error');
      throw err;
    }
    metrics.recordReload(reason, 'ok');
    if (mine !== generation) return true;
    schema = loaded;
    log('schema loaded: %d tables, %d functions', loaded.tables.length, loaded.functions.length);
    return false;
  };
  // The LISTEN connection is made like the pool's, or by the connection policy of reload_database_url
  // (validated here, at creation, like database_url).
  const reloadClient = config.reloadListen && config.reloadDatabaseUrl !== undefined ? createConnectionPolicy(config.reloadDatabaseUrl, options.gss).Client : undefined;
  const listenClients = config.reloadListen ? listenClientFactory(pool, reloadClient) : undefined;
  // Reload on DDL without a call (docs/scaling-out.md): LISTEN and/or catalog polling. One watcher
  // per start: a start that fails stops its watcher, and a later start makes a new one.
  let watcher: SchemaWatcher | undefined;
  const start = async (): Promise<void> => {
    const startedAt = Date.now();
    const mine = createSchemaWatcher({
      pool,
      schemas: config.schemas,
      listen: listenClients === undefined ? undefined : { newClient: listenClients, channel: config.reloadChannel },
      pollMs: config.schemaPollS * 1000,
      reload: (reason) => discover(reason),
    });
    watcher = mine;
    try {
      await checkRole(pool, config.allowRlsBypassRole, howToSet(config, 'allowRlsBypassRole', true));
      topology.distributed = await detectCitus(pool);
      if (topology.distributed) log('Citus coordinator: the tenant context is also sent by SET LOCAL to the workers (docs/citus.md)');
      // Behind a transaction-mode pooler that loses them, switch before the first request (docs/scaling-out.md).
      if (namedStatements.enabled) {
        // A check that fails proves nothing: statements stay named, and a request that meets a lost one still switches.
        const verdict = await probeNamedStatements(pool).catch((err: unknown) => ({ kept: true, why: `the check failed: ${err instanceof Error ? err.message : String(err)}` }));
        log('named prepared statements: %s (%s)', verdict.kept ? 'kept' : 'lost', verdict.why);
        if (!verdict.kept) namedStatements.disable(verdict.why);
      }
      // Before the first discovery, so that no DDL can fall between the catalog read and LISTEN.
      await mine.start();
      await discover('start');
      await limiter?.check();
      await agentLimiter?.check();
    } catch (err) {
      void mine.stop();
      // A down or refusing database says so, with host:port and no driver stack (docs/configuration.md).
      log('ready failed: %O', err);
      throw toDatabaseUnreachable(err, pool, config.poolConnectionTimeoutMs);
    }
    // Fail open: tables without RLS enabled and forced are served, with one warning listing them.
    if (schema) await warnAboutRowSecurity(pool, schema);
    // Last: a start that reruns (the database was unreachable) never started the replicas.
    await replicas?.start();
    await changeFeed?.start();
    // The one line that says the gateway serves, and what (docs/getting-started.md, "Logs").
    log('ready in %d ms: schemas %s, %d tables, %d functions', Date.now() - startedAt, config.schemas.join(', '), schema?.tables.length ?? 0, schema?.functions.length ?? 0);
  };
  // The default grammar's stages, whatever this mount's door is: the agents' door and the change
  // feed (a tool call, a subscription is the REST request for it). A parse override applies when
  // the mount is REST too.
  const restStages = door === rest ? stages : withTracing(applyStageOverrides({ ...defaults, parse: rest.parse, allowList: allowListFor(rest) }, { ...options.stages, parse: undefined }));
  // Live changes (docs/change-feed.md): a door of its own beside the mount's, on the same stages.
  const changeFeedStats = new ChangeFeedStats();
  const changeFeed = config.changeFeed?.enabled === true ? createFeed() : undefined;
  function createFeed(): ChangeFeed {
    const feed = config.changeFeed!;
    const url = feed.databaseUrl ?? config.databaseUrl;
    if (url === undefined) throw new GatewayConfigError('change_feed needs change_feed.database_url (a role with REPLICATION) when the gateway is given a pool', 'changeFeed.databaseUrl');
    const FeedClient = createConnectionPolicy(url, options.gss).Client;
    return createChangeFeed({
      config,
      feed,
      stages: restStages,
      ...(queryAllowList === undefined ? {} : { allowSubscription: (command: Command) => allowSubscription(queryAllowList, command, rest.pattern) }),
      withHints: (err, identity) => withHints(err, identity),
      whenStarted: () => whenStarted(),
      schema: () => schema!,
      db,
      connect: async () => {
        const client = new FeedClient({ application_name: 'tablegate change feed' });
        client.on('error', () => undefined);
        await client.connect();
        return client;
      },
      stats: changeFeedStats,
    });
  }
  // Last of the things that can throw at creation: a host registry keeps no series of a gateway
  // that was never made.
  const metrics = new Metrics(options.metrics ?? {}, {
    pool: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
    schema: () => schema && { tables: schema.tables.length, functions: schema.functions.length },
    connection: () => connection?.stats,
    ...(replicas ? { replicas: () => replicas.status() } : {}),
    exports: exportStats,
    ...(changeFeed ? { changeFeed: changeFeedStats } : {}),
  });
  const ready = start();
  // Callers that never await `ready` must not crash the process; requests report it as 503.
  ready.catch((err: unknown) => log('not ready: %s', err instanceof Error ? err.message : String(err)));

  // `ready` reports the first start. When it failed only because the database could not be reached
  // (it was down or restarting while the host started), a request starts again, at most once per
  // second, so the gateway serves as soon as the database is back (docs/getting-started.md). Any
  // other failure (a superuser role, a policy naming a missing table) is for the operator to fix.
  let startup: Promise<void> = ready;
  let lastStart = Date.now();
  // Once a start succeeded it stays done (a later reload failing does not undo it): requests then
  // skip the promise, and its microtask turns, altogether.
  let started = false;
  ready.then(() => (started = true), () => undefined);
  const whenStarted = async (): Promise<void> => {
    try {
      await startup;
    } catch (err) {
      if (err instanceof DatabaseUnreachableError && !drain.draining && Date.now() - lastStart >= restartIntervalMs) {
        lastStart = Date.now();
        startup = start();
        startup.then(() => (started = true), (e: unknown) => log('start again failed: %s', e instanceof Error ? e.message : String(e)));
        await startup;
      } else {
        throw err;
      }
    }
  };

  async function withHints(err: unknown, identity: Identity | undefined): Promise<unknown> {
    if (!(err instanceof GatewayError)) return err;
    // No identity (the request failed before auth finished): no name of the schema at all.
    const visibility = identity === undefined ? nothingVisible : nameVisibility(identity);
    const narrowed = err.visibleTo(visibility);
    // The reload hint confirms that a table exists: only for one the caller's policy would let it read.
    if (narrowed instanceof UnknownTableError && visibility.readable(unloadedTable(narrowed.table)) && (await unloaded.exists(narrowed.table))) return narrowed.withReloadHint();
    return narrowed;
  }

  const untraced = createRequestHandler({
    config,
    stages,
    responder: door,
    ...(door.expand && door.render ? { expansions: { expand: door.expand, render: door.render, ...(door.bodyLimit ? { bodyLimit: door.bodyLimit } : {}) } } : {}),
    describe,
    drain,
    metrics,
    limiter: limiter || undefined,
    whenStarted,
    isStarted: () => started,
    schema: () => schema!,
    database: (primaryOnly) => replicas?.database(primaryOnly) ?? db,
    queryPattern: door.pattern,
    reloadAfterDrift: () => reloadAfterDrift(),
    withHints,
  });
  const handle = tracing ? tracing.handler(untraced) : untraced;

  // A table or column the cache knows is gone (a migration ran): re-discover in the background,
  // at most once per interval, so the next requests see the new schema.
  let lastDriftReload = 0;
  const reloadAfterDrift = (): void => {
    if (drain.draining || Date.now() - lastDriftReload < driftReloadIntervalMs) return;
    lastDriftReload = Date.now();
    discover('drift').catch((e: unknown) => log('reload after schema drift failed: %s', e instanceof Error ? e.message : String(e)));
  };

  const serve = (req: Request, res: Response, _next: NextFunction): void => {
    // A CORS preflight no host cors() answered: 204 + Allow, before auth, no SQL (docs/security.md).
    if (req.method === 'OPTIONS') return answerOptions(req, res);
    // The SSE route is the default grammar's; a postgrest mount's live changes are its realtime endpoint.
    if (door === rest && req.method === 'GET' && changesRoute.test(req.path)) {
      if (changeFeed) return void changeFeed.handle(req, res);
      return door.sendError(res, new GatewayError('NOT_FOUND', 'The change feed is turned off (change_feed.enabled = false).', { hint: 'See docs/change-feed.md.' }), requestIdOf(req), false);
    }
    void handle(req, res);
  };
  const router = directRouter(serve);

  const admin = createAdminRouter({
    adminToken: config.adminToken,
    pool,
    metrics,
    schema: () => schema,
    startedAt: Date.now(),
    draining: () => drain.draining,
    replicas: () => replicas?.status(),
  });

  // The agents' door (docs/mcp.md): a tool call is the REST request for it.
  const mcp = createMcpRouter({
    config,
    stages: restStages,
    render: (command, plan, result) => renderResult(command, plan, result, cursors),
    whenStarted,
    schema: () => schema!,
    database: (primaryOnly) => replicas?.database(primaryOnly) ?? db,
    access: (identity) => describeAccess({ access: accessPolicy, legacy: legacyPolicy }, identity),
    callable: (fn) => functionAllowList === undefined || functionAllowList.allows(fn),
    limiter: limiter || undefined,
    agentLimiter,
    metrics,
    drain,
    withHints: (err, identity) => withHints(err, identity),
    version,
  });

  // supabase-js Realtime over the change feed: made on the first attachRealtime.
  let realtime: RealtimeEndpoint | undefined;
  const realtimeEndpoint = (): RealtimeEndpoint => {
    if (changeFeed === undefined) throw new GatewayConfigError('attachRealtime serves the change feed: turn it on with change_feed = { enabled = true } (docs/change-feed.md)', 'changeFeed');
    return (realtime ??= createRealtimeEndpoint({
      feed: changeFeed,
      auth: async (request) => {
        await whenStarted();
        return stages.auth({ request, config, schema: schema!, db });
      },
      publicError: (err, identity) => withHints(err, identity),
      draining: () => drain.draining || closing !== undefined,
      maxPayload: realtimeMaxPayload,
      maxBufferedBytes: realtimeMaxBufferedBytes,
    }));
  };

  let closing: Promise<void> | undefined;
  // Created on first access (the host mounting it): only then is swagger-ui-dist, an optional peer,
  // needed; missing, that access throws GatewayConfigError naming `npm install swagger-ui-dist`.
  // Not enumerable, so that listing the gateway's properties never throws.
  let docs: Router | undefined;
  Object.defineProperty(router, 'docs', { enumerable: false, get: () => (docs ??= createDocsRouter({ apiUrl: config.docsApiUrl })) });
  return Object.assign(router, {
    ready,
    admin,
    mcp,
    config,
    attachRealtime(server: http.Server, opts?: RealtimeAttachOptions): RealtimeAttachment {
      return realtimeEndpoint().attach(server, opts);
    },
    async reloadSchema(): Promise<void> {
      await whenStarted();
      await discover();
    },
    async openApi(serverUrl = '/api'): Promise<Record<string, unknown>> {
      await whenStarted();
      return describe.openApi(schema!, serverUrl);
    },
    async typeScript(): Promise<string> {
      await whenStarted();
      return describe.typeScript(schema!);
    },
    close(): Promise<void> {
      // Every caller waits for the same drain; refusing new requests starts synchronously.
      closing ??= (async () => {
        // Streams end first, each with a final event: they would otherwise hold the drain open.
        realtime?.close();
        await changeFeed?.close();
        const drained = drain.drain(config.drainTimeoutMs);
        limiter?.close();
        agentLimiter?.close();
        // No start begins once draining (whenStarted checks it), so this is the last watcher.
        await Promise.all([watcher?.stop(), startup.catch(() => undefined)]);
        const aborted = await drained;
        if (aborted > 0) log('drain timeout: %d request(s) answered 503', aborted);
        await replicas?.close();
        unguardPool?.();
        metrics.close();
        if (!ownsPool) return;
        // end() first: it stops serving requests still queued for a connection; then the
        // statements of aborted requests are cut off so that end() can finish.
        const ended = pool.end();
        if (aborted > 0) checkedOut?.endAll();
        await ended;
      })();
      return closing;
    },
  }) as Gateway;
}

/**
 * An Express Router whose one layer is `serve`, which answers every request it is given: a call
 * goes to `serve` directly instead of through the router's dispatch (path matching, parameter
 * processing, a `next` closure per layer: about 10 us and 4 KB a request, docs/performance.md).
 * The same behaviour: a layer added after `serve` could never be reached, and `handle()` still
 * dispatches through the router's stack, which holds `serve`.
 */
function directRouter(serve: (req: Request, res: Response, next: NextFunction) => void): Router {
  const dispatching = express.Router();
  dispatching.use(serve);
  const direct = function tablegate(req: Request, res: Response, next: NextFunction): void {
    serve(req, res, next);
  };
  // The router's own properties (its stack, params, options) and its methods, through its prototype.
  return Object.assign(Object.setPrototypeOf(direct, Object.getPrototypeOf(dispatching)) as Router, dispatching);
}

const driftReloadIntervalMs = 5000;
/** Largest realtime message a client may send: joins and tokens are small. */
const realtimeMaxPayload = 1024 * 1024;
/** Unsent bytes a realtime socket may hold before it is dropped as a slow consumer. */
const realtimeMaxBufferedBytes = 16 * 1024 * 1024;
/** `GET /{table}/_changes`: the change feed's route (docs/change-feed.md). */
const changesRoute = /^\/[^/]+\/_changes\/?$/;

/**
 * The allow-list's verdict on a subscription: the list's pattern with the route
 * `{table}/_changes`, so that allowing a list never allows its live changes (docs/allow-list.md).
 */
function allowSubscription(list: QueryAllowList, command: Command, patternOf: (command: Command) => string | undefined): void {
  const listPattern = patternOf(command)!;
  const route = command.kind === 'read' && command.media === 'page' ? `GET ${command.table.name}` : '';
  const pattern = `${route}/_changes${listPattern.slice(route.length)}`;
  if (!list.allows(pattern)) throw new GatewayError('QUERY_NOT_ALLOWED', 'This query pattern is not on the allow-list.', { details: { pattern } });
}
/** Least time between two starts caused by requests while the database was unreachable at start. */
const restartIntervalMs = 1000;

/**
 * The cursor HMAC key: `cursor_secret`, else derived from the JWT secret (so every instance
 * behind a load balancer agrees), else random per process (cursors then expire on restart).
 */
function cursorKey(config: ResolvedConfig): Buffer {
  const base = config.cursorSecret ?? config.jwtSecret;
  if (base === undefined) return randomBytes(32);
  return createHash('sha256').update('tablegate cursor key v1\u0000').update(base).digest();
}

