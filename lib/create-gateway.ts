/**
 * createGateway(options) -> Express Router. All the work that can be done once is done here
 * (helmet's pattern): options are validated and frozen, the stages are built, and discovery
 * starts; the per-request path only runs the pipeline.
 */
import { createHash, randomBytes } from 'node:crypto';
import express from 'express';
import type { NextFunction, Request, Response, Router } from 'express';
import type pg from 'pg';
import createDebug from 'debug';
import type { GatewayOptions } from './config/gateway-options';
import type { ResolvedConfig } from './config/resolved-config';
import { howToSet, resolveConfig } from './config/resolve-config';
import { checkRole } from './db/check-role';
import { warnAboutRowSecurity } from './db/check-row-security';
import { createDatabase } from './db/create-database';
import { createPool } from './db/create-pool';
import { toDatabaseUnreachable } from './db/database-unreachable-error';
import { GatewayConfigError } from './errors/gateway-config-error';
import { GatewayError } from './errors/gateway-error';
import { digestRequest, requestIdOf } from './http/digest-request';
import { readBody } from './http/read-body';
import { renderResult } from './http/render-result';
import { sendError, sendJson } from './http/send-error';
import { readsFromPrimary } from './http/read-primary-header';
import { createAdminRouter } from './ops/create-admin-router';
import { Metrics } from './ops/metrics';
import { loadSchema } from './schema/load-schema';
import type { SchemaCache } from './schema/schema-types';
import { createAllowListStage } from './stages/allow-list/create-allow-list-stage';
import { loadFunctionAllowList } from './stages/allow-list/function-allow-list';
import { loadQueryAllowList } from './stages/allow-list/query-allow-list';
import { queryPattern } from './stages/allow-list/query-pattern';
import { createAuthStage } from './stages/auth/create-auth-stage';
import { createCompileStage } from './stages/compile/create-compile-stage';
import { createExecuteStage } from './stages/execute/create-execute-stage';
import { createCursorCodec } from './stages/parse/cursor-codec';
import { createReadRouting } from './create-read-routing';
import { createParseStage } from './stages/parse/create-parse-stage';
import { checkLegacyPolicyNames, checkPolicyNames } from './stages/policy/check-policy-names';
import { createPolicyStage } from './stages/policy/create-policy-stage';
import { loadAccessPolicy } from './stages/policy/load-access-policy';
import { loadLegacyPolicy } from './stages/policy/load-legacy-policy';
import { applyStageOverrides, runPipeline } from './stages/run-pipeline';
import type { GatewayContext, Stages } from './stages/stage-types';

const log = createDebug('tablegate:gateway');

export interface Gateway extends Router {
  /** Resolves once the schema is discovered and the database role is checked; rejects otherwise. */
  readonly ready: Promise<void>;
  /** GET /metrics and GET /health/internal, to mount where the host wants them. */
  readonly admin: Router;
  /** Re-reads the schema (after a migration); requests keep using the old cache until it is done. */
  reloadSchema(): Promise<void>;
  /** Drains the pools the gateway created (read replicas' too); a pool passed in `options.pool` is left open. */
  close(): Promise<void>;
  /** The frozen, resolved configuration (secrets are non-enumerable). */
  readonly config: ResolvedConfig;
}

export function createGateway(options: GatewayOptions): Gateway {
  const config = resolveConfig(options);
  const cursors = createCursorCodec(cursorKey(config));
  const accessPolicy = loadAccessPolicy(config.access);
  const legacyPolicy = loadLegacyPolicy(config);
  const defaults: Stages = {
    auth: createAuthStage(config),
    parse: createParseStage(cursors),
    policy: createPolicyStage({ ...(accessPolicy ? { access: accessPolicy } : {}), ...(legacyPolicy ? { legacy: legacyPolicy } : {}) }),
    allowList: createAllowListStage({
      ...(config.allowListPath === undefined ? {} : { queries: loadQueryAllowList(config.allowListPath) }),
      ...(config.rpcAllowlistPath === undefined ? {} : { functions: loadFunctionAllowList(config.rpcAllowlistPath) }),
    }),
    compile: createCompileStage(),
    execute: createExecuteStage(),
  };
  const stages = applyStageOverrides(defaults, options.stages);

  const ownsPool = options.pool === undefined;
  const pool: pg.Pool = options.pool ?? createPool(config);
  const db = createDatabase(pool, config);
  // read_replica_urls: reads may go to replicas (docs/scaling-out.md); undefined without them.
  const replicas = createReadRouting(config, pool, db);
  const metrics = new Metrics();
  let schema: SchemaCache | undefined;

  // Discoveries may overlap (reloadSchema beside a drift reload); only the latest started may
  // install its result, so an older, slower read of the catalog never overwrites a newer one.
  let generation = 0;
  const discover = async (): Promise<void> => {
    const mine = ++generation;
    const loaded = await loadSchema(pool, config.schemas);
    if (accessPolicy) checkPolicyNames(accessPolicy, loaded);
    if (legacyPolicy) checkLegacyPolicyNames(legacyPolicy, loaded);
    if (mine !== generation) return;
    schema = loaded;
    log('schema loaded: %d tables, %d functions', loaded.tables.length, loaded.functions.length);
  };
  const ready = (async () => {
    try {
      await checkRole(pool, config.allowRlsBypassRole, howToSet(config, 'allowRlsBypassRole', true));
      await discover();
    } catch (err) {
      // A down or refusing database says so, with host:port and no driver stack (docs/configuration.md).
      log('ready failed: %O', err);
      throw toDatabaseUnreachable(err, pool, config.poolConnectionTimeoutMs);
    }
    // Fail open: tables without RLS enabled and forced are served, with one warning listing them.
    if (schema) await warnAboutRowSecurity(pool, schema);
    await replicas?.start();
  })();
  // Callers that never await `ready` must not crash the process; requests report it as 503.
  ready.catch((err: unknown) => log('not ready: %s', err instanceof Error ? err.message : String(err)));

  const handle = async (req: Request, res: Response): Promise<void> => {
    const started = process.hrtime.bigint();
    const requestId = requestIdOf(req);
    res.setHeader('X-Request-Id', requestId);
    let route = 'unknown';
    try {
      // Writes read their own body (the router is mounted without a body parser), bounded by
      // max_request_body_bytes; other methods never read one.
      const body = req.method === 'POST' || req.method === 'PATCH' ? await readBody(req, config.maxRequestBodyBytes) : undefined;
      const request = digestRequest(req, requestId, body);
      try {
        await ready;
      } catch {
        throw new GatewayError('SERVICE_UNAVAILABLE', 'The gateway is not ready: schema discovery or the database role check failed.', { headers: { 'Retry-After': '5' } });
      }
      const primaryOnly = readsFromPrimary(request);
      const ctx: GatewayContext = { request, config, schema: schema!, db: replicas?.database(primaryOnly) ?? db };
      res.locals.gateway = ctx;
      const result = await runPipeline(stages, ctx);
      route = ctx.command!.kind;
      showPattern(res, ctx);
      const rendered = renderResult(ctx.command!, result, cursors);
      res.statusCode = rendered.status;
      if (rendered.body === null) res.end();
      else sendJson(res, rendered.body);
    } catch (err) {
      const ctx = res.locals.gateway as GatewayContext | undefined;
      if (ctx?.command) {
        route = ctx.command.kind;
        showPattern(res, ctx);
      }
      if (isSchemaDrift(err)) reloadAfterDrift();
      sendError(res, err, requestId);
    } finally {
      metrics.record(route, res.statusCode, Number(process.hrtime.bigint() - started) / 1e9);
    }
  };

  // A table or column the cache knows is gone (a migration ran): re-discover in the background,
  // at most once per interval, so the next requests see the new schema.
  let lastDriftReload = 0;
  const reloadAfterDrift = (): void => {
    if (Date.now() - lastDriftReload < driftReloadIntervalMs) return;
    lastDriftReload = Date.now();
    discover().catch((e: unknown) => log('reload after schema drift failed: %s', e instanceof Error ? e.message : String(e)));
  };

  const router = express.Router();
  router.use((req: Request, res: Response, _next: NextFunction) => {
    void handle(req, res);
  });

  const admin = createAdminRouter({
    adminToken: config.adminToken,
    pool,
    metrics,
    schema: () => schema,
    startedAt: Date.now(),
    replicas: () => replicas?.status(),
  });

  let closed = false;
  return Object.assign(router, {
    ready,
    admin,
    config,
    async reloadSchema(): Promise<void> {
      await ready;
      await discover();
    },
    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      await ready.catch(() => undefined);
      await replicas?.close();
      if (ownsPool) await pool.end();
    },
  }) as Gateway;
}

const driftReloadIntervalMs = 5000;

/** Dev mode: `x-gw-query-pattern` tells a developer the line to add to the allow-list (contract §6). */
function showPattern(res: Response, ctx: GatewayContext): void {
  if (!ctx.config.devMode || !ctx.command || res.headersSent) return;
  const pattern = queryPattern(ctx.command, ctx.request);
  if (pattern !== undefined) res.setHeader('x-gw-query-pattern', pattern);
}

function isSchemaDrift(err: unknown): boolean {
  const cause = (err as { cause?: { code?: unknown; where?: unknown } } | undefined)?.cause;
  const sqlstate = cause?.code;
  // 42883 / 42725 only for a call that no longer resolves (execute maps it; no `where` context).
  return sqlstate === '42P01' || sqlstate === '42703' || ((sqlstate === '42883' || sqlstate === '42725') && !cause?.where && isCallError(err));
}

function isCallError(err: unknown): boolean {
  const code = (err as { code?: unknown }).code;
  return code === 'RPC_SIGNATURE_MISMATCH' || code === 'NOT_FOUND';
}

/**
 * The cursor HMAC key: `cursor_secret`, else derived from the JWT secret (so every instance
 * behind a load balancer agrees), else random per process (cursors then expire on restart).
 */
function cursorKey(config: ResolvedConfig): Buffer {
  const base = config.cursorSecret ?? config.jwtSecret;
  if (base === undefined) return randomBytes(32);
  return createHash('sha256').update('tablegate cursor key v1\u0000').update(base).digest();
}

