/**
 * `gateway.admin`: GET /metrics and GET /health/internal. With `admin_token` set, both need
 * `Authorization: Bearer <admin_token>` (compared in constant time); without it, the host must
 * restrict them by network means (docs/configuration.md, `admin_token`).
 * GET /health/live is the liveness probe: no token, no database query, always 200 while the
 * process answers (docs/getting-started.md, "Health checks").
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import express from 'express';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { GatewayError } from './errors/gateway-error';
import { sendError, sendJson } from './http/send-error';
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import type { SchemaCache } from './schema/schema-types';
import type { ReplicaStatus } from './db/replica-set';
import { version } from './version';
import type { Metrics } from './ops/metrics';

export interface AdminSources {
  readonly adminToken: string | undefined;
  readonly pool: pg.Pool;
  readonly metrics: Metrics;
  readonly schema: () => SchemaCache | undefined;
  readonly startedAt: number;
  /** True once close() began: health answers 503 so that load balancers stop sending traffic. */
  readonly draining?: () => boolean;
  /** Each read replica's state and lag; undefined without read_replica_urls. */
  readonly replicas?: () => readonly ReplicaStatus[] | undefined;
}

export function createAdminRouter(sources: AdminSources): express.Router {
  const router = express.Router();
  const expected = sources.adminToken === undefined ? undefined : digest(sources.adminToken);
  const poolStats = () => ({ total: sources.pool.totalCount, idle: sources.pool.idleCount, waiting: sources.pool.waitingCount });

  const guard = (req: IncomingMessage, res: ServerResponse): boolean => {
    if (expected === undefined) return true;
    const match = /^bearer\s+(.+)$/i.exec(req.headers.authorization ?? '');
    if (match && timingSafeEqual(digest(match[1]!.trim()), expected)) return true;
    sendError(res, new GatewayError('UNAUTHORIZED', 'This endpoint requires the admin token.', { headers: { 'WWW-Authenticate': 'Bearer' } }), randomUUID());
    return false;
  };

  router.get('/metrics', (req, res) => {
    if (!guard(req, res)) return;
    sources.metrics.render().then(
      ({ contentType, body }) => {
        res.setHeader('Content-Type', contentType);
        res.end(body);
      },
      (err: unknown) => sendError(res, err, randomUUID()),
    );
  });

  // Liveness, not readiness: a database outage or a drain must not get the process restarted, so
  // it asks nothing and says nothing but that the process answers; hence no token.
  router.get('/health/live', (_req, res) => sendJson(res, '{"status":"live"}'));

  router.get('/health/internal', (req, res) => {
    if (!guard(req, res)) return;
    void health(sources, poolStats()).then((report) => {
      res.statusCode = report.status === 'ok' ? 200 : 503;
      sendJson(res, JSON.stringify(report));
    });
  });
  return router;
}

/** Longest wait for the database's answer to the health probe before it counts as unreachable. */
const healthProbeTimeoutMs = 5000;

async function health(sources: AdminSources, pool: { total: number; idle: number; waiting: number }) {
  // While draining the answer is 503 anyway, and a probe would queue behind the requests being
  // drained (or hit a pool that has been ended), so the database is not asked.
  const draining = sources.draining?.() === true;
  const start = process.hrtime.bigint();
  let reachable: boolean | null = draining ? null : true;
  if (!draining) {
    try {
      // Bounded: a frozen or cut-off server never answers, and the probe must not hang with it
      // (pg then fails the query and the pool discards the client).
      await sources.pool.query({ text: 'SELECT 1', query_timeout: healthProbeTimeoutMs } as pg.QueryConfig);
    } catch {
      reachable = false;
    }
  }
  const latencyMs = draining ? null : Math.round((Number(process.hrtime.bigint() - start) / 1e6) * 100) / 100;
  const schema = sources.schema();
  const replicas = sources.replicas?.();
  return {
    status: reachable === true && schema && !draining ? 'ok' : 'degraded',
    ...(draining ? { draining: true } : {}),
    version,
    uptime_s: Math.round((Date.now() - sources.startedAt) / 1000),
    db: { reachable, latency_ms: latencyMs },
    pool,
    schema: { tables: schema?.tables.length ?? 0, functions: schema?.functions.length ?? 0, loaded_at: schema?.loadedAt.toISOString() ?? null },
    // A replica that is out does not degrade the status: its reads go to the primary.
    ...(replicas ? { replicas } : {}),
  };
}

/** Hash both sides so the constant-time compare works on equal-length buffers. */
function digest(token: string): Buffer {
  return createHash('sha256').update(token).digest();
}
