/**
 * `rate_limit` (docs/scaling-out.md#rate-limits): express-rate-limit, built once per gateway and
 * run for each request after `auth` and `parse` (so the caller and the route kind are known) and
 * before `policy` and anything that touches the data.
 * In: the request and response (express-rate-limit sets `RateLimit-*` and `Retry-After` on the
 * response), the caller and the command's kind. Out: nothing when the request may go on; a
 * GatewayError otherwise: `RATE_LIMITED` (429) over the limit, `SERVICE_UNAVAILABLE` (503) when
 * the store cannot count.
 * Never: lets a request through uncounted because the store failed (fail closed); writes the
 * response itself (the gateway's error path does); keys on request text (lib/ops/rate-limit-key.ts).
 */
import createDebug from 'debug';
import type { Request, Response } from 'express';
import { MemoryStore, rateLimit } from 'express-rate-limit';
import type { Store } from 'express-rate-limit';
import type { RateLimitConfig } from '../pipeline/resolved-config';
import { GatewayConfigError } from '../errors/gateway-config-error';
import { GatewayError, isGatewayError } from '../errors/gateway-error';
import { PostgresRateLimitStore, rateLimitTable } from './postgres-rate-limit-store';
import type { RateLimitPool } from './postgres-rate-limit-store';
import { rateLimitKey } from './rate-limit-key';
import type { RateLimitCaller } from './rate-limit-key';

const log = createDebug('tablegate:rate-limit');

export interface RateLimiter {
  /**
   * Counts the request under each of its kinds (an upsert that can update is an `insert` and an
   * `update`); rejects with a GatewayError when any of them is over the limit.
   */
  admit(req: Request, res: Response, caller: RateLimitCaller, kinds: readonly string[]): Promise<void>;
  /** At `ready`: the postgres store checks its table and privileges; the others have nothing to check. */
  check(): Promise<void>;
  /** Stops the stores' timers (a host's store is the host's to shut down). */
  close(): void;
}

/** A store failure is printed at most this often; every one is in the `tablegate:rate-limit` debug log. */
const storeErrorPrintIntervalMs = 60_000;

/** `preparedStatements` is asked per hit: the gateway turns named statements off behind a pooler that loses them. */
export function createRateLimiter(config: RateLimitConfig, pool: RateLimitPool, preparedStatements: () => boolean): RateLimiter {
  const postgres = config.store === 'postgres' ? new PostgresRateLimitStore(pool, preparedStatements) : undefined;
  const owned: Store | undefined = config.store === 'memory' ? new MemoryStore() : postgres;
  const store: Store = owned ?? (config.store as Store);
  // express-rate-limit's keyGenerator sees only (req, res): the key made from the context is handed over here.
  const keys = new WeakMap<Request, string>();

  const middleware = rateLimit({
    windowMs: config.windowS * 1000,
    limit: config.requests,
    // The IETF draft-6 header fields: RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset,
    // RateLimit-Policy; Retry-After when limited. No X-RateLimit-* legacy fields.
    standardHeaders: 'draft-6',
    legacyHeaders: false,
    store,
    passOnStoreError: false,
    keyGenerator: (req: Request) => keys.get(req) ?? 'unknown',
    handler: (_req, res, next) => {
      const retryAfter = Number(res.getHeader('Retry-After'));
      next(
        new GatewayError('RATE_LIMITED', `Too many requests: at most ${config.requests} per ${config.windowS} s for this caller and route kind.`, {
          details: { limit: config.requests, window_s: config.windowS },
          hint: Number.isFinite(retryAfter) ? `Retry in ${retryAfter} s.` : 'Retry when the window resets.',
        }),
      );
    },
    // These checks are about express-rate-limit's own IP keyGenerator, which is replaced here:
    // keys are made from the caller (rate-limit-key.ts). The host's `trust proxy` decides req.ip.
    validate: { ip: false, trustProxy: false, xForwardedForHeader: false, forwardedHeader: false, keyGeneratorIpFallback: false, ipv6SubnetOrKeyGenerator: false },
    logger: {
      warn: (err: unknown, message?: string) => console.warn(`tablegate: rate limit: ${message ?? messageOf(err)}`),
      error: (err: unknown, message?: string) => console.error(`tablegate: rate limit: ${message ?? messageOf(err)}`),
    },
  });

  let lastPrinted = 0;
  const storeFailed = (err: unknown): GatewayError => {
    log('store failed: %O', err);
    if (Date.now() - lastPrinted >= storeErrorPrintIntervalMs) {
      lastPrinted = Date.now();
      console.error(`tablegate: the rate-limit store failed (${messageOf(err)}); requests are refused with 503 until it works`);
    }
    return new GatewayError('SERVICE_UNAVAILABLE', 'The rate limit could not be checked; try again shortly.', { headers: { 'Retry-After': '1' } });
  };

  return {
    async admit(req, res, caller, kinds) {
      for (const kind of kinds) {
        keys.set(req, rateLimitKey(caller, kind, req.ip ?? req.socket.remoteAddress));
        await new Promise<void>((resolve, reject) => {
          void middleware(req, res, (err?: unknown) => {
            if (err === undefined || err === null) resolve();
            else reject(isGatewayError(err) ? err : storeFailed(err));
          });
        });
      }
    },
    async check() {
      await postgres?.check().catch((err: unknown) => {
        throw tableError(err);
      });
    },
    close() {
      void owned?.shutdown?.();
    },
  };
}

/**
 * The postgres store cannot use its table: what is wrong and where the SQL that fixes it is. A
 * connection failure stays as it is, for `ready` to report as one.
 */
function tableError(err: unknown): unknown {
  const code = (err as { code?: unknown } | null)?.code;
  // Syntax/access (42: missing table, column or privilege), integrity (23) and data (22) errors.
  if (typeof code !== 'string' || !/^(42|23|22)/.test(code)) return err;
  return new GatewayConfigError(
    `rate_limit uses the postgres store, but this database role cannot use its table ${rateLimitTable.schema}.${rateLimitTable.name}: ${messageOf(err)} (SQLSTATE ${code}); create and grant it with the SQL in docs/scaling-out.md#rate-limits`,
    'rate_limit',
  );
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
