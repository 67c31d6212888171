/**
 * The per-request path of a gateway (docs/architecture.md): digest the request, run the pipeline,
 * answer through the door's responder, and record the request's metrics and log line. In: the
 * parts createGateway built once. Out: an Express handler. Never: builds a stage, reads the
 * configuration file or the catalog itself, or answers twice (a drain that timed out owns the
 * response).
 */
import type { Request, Response } from 'express';
import { operationOf, type Command } from './command/command';
import type { ResolvedConfig } from './pipeline/resolved-config';
import { GatewayError, isGatewayError } from './errors/gateway-error';
import { isSchemaDrift } from './errors/sqlstate-meaning';
import type { DescribeRoute } from './create-describe-route';
import { digestRequest, requestIdOf } from './http/digest-request';
import { readsFromPrimary } from './http/read-primary-header';
import { isOctetStream, readBody, readBodyBytes } from './http/read-body';
import type { Door, Responder } from './pipeline/door';
import { runExpansion } from './run-expansion';
import { sendJson } from './http/send-error';
import { serverTiming } from './http/server-timing';
import type { RateLimiter } from './ops/create-rate-limiter';
import type { Drain } from './ops/drain';
import { logRequest } from './ops/log-request';
import { answeredErrorKey } from './ops/tracing/create-tracing';
import type { Metrics } from './ops/metrics';
import type { Database } from './pipeline/database';
import { measuredDatabase, newRequestMeasures } from './pipeline/request-measures';
import { authenticate, runPipeline } from './pipeline/run-pipeline';
import type { GatewayContext, Stages } from './pipeline/stage-types';
import type { SchemaCache } from './schema/schema-types';
import type { Identity } from './pipeline/identity';

export interface RequestHandlerParts {
  readonly config: ResolvedConfig;
  readonly stages: Stages;
  readonly responder: Responder;
  /** The door's requests that stand for several (docs/writing.md); absent: it has none. */
  readonly expansions?: Required<Pick<Door, 'expand' | 'render'>> & Pick<Door, 'bodyLimit'>;
  readonly describe: DescribeRoute;
  readonly drain: Drain;
  readonly metrics: Metrics;
  readonly limiter: RateLimiter | undefined;
  /** Resolves once the gateway has started (starting it again when the database was down). */
  whenStarted(): Promise<void>;
  /** True once whenStarted() would resolve at once: the request need not wait for it. */
  isStarted(): boolean;
  /** The schema cache; called only after whenStarted resolved. */
  schema(): SchemaCache;
  /** The Database for this request: the primary, or a read replica unless `primaryOnly`. */
  database(primaryOnly: boolean): Database;
  /** Dev mode's allow-list pattern of a command (docs/allow-list.md), or undefined. */
  queryPattern(command: Command): string | undefined;
  /** A schema drift was seen: reload in the background, rate-limited by the caller. */
  reloadAfterDrift(): void;
  /**
   * The error to send for `err`: its "did you mean" hint narrowed to the names the caller may see,
   * and an unknown table's 404 may gain a reload hint (docs/errors.md). No identity: no names.
   */
  withHints(err: unknown, identity: Identity | undefined): Promise<unknown>;
}

export function createRequestHandler(parts: RequestHandlerParts): (req: Request, res: Response) => Promise<void> {
  const { config, stages, responder, describe, drain, metrics, limiter } = parts;

  /** Dev mode: `x-gw-query-pattern` tells a developer the line to add to the allow-list (docs/allow-list.md). */
  const showPattern = (res: Response, ctx: GatewayContext): void => {
    if (!config.devMode || !ctx.command || res.headersSent) return;
    const pattern = parts.queryPattern(ctx.command);
    if (pattern !== undefined) res.setHeader('x-gw-query-pattern', pattern);
  };

  return async (req, res) => {
    // performance.now(), not process.hrtime.bigint(): a double, no BigInt allocated per reading.
    const started = performance.now();
    const requestId = requestIdOf(req);
    res.setHeader('X-Request-Id', requestId);
    let route = 'unknown';
    // Time in auth and the database, filled in along the way (docs/architecture.md#metrics).
    const measures = newRequestMeasures();
    const seconds = () => (performance.now() - started) / 1000;
    // Set just before each answer is written, so that `total` covers the request's whole work.
    const timing = (): void => {
      if (config.serverTiming && !res.headersSent) res.setHeader('Server-Timing', serverTiming(measures, performance.now() - started));
    };
    const refuse = (err: GatewayError): void => (timing(), responder.sendError(res, err, requestId, false));
    const ticket = drain.enter(() => refuse(shuttingDown('The gateway shut down before the request finished.')));
    if (ticket === undefined) {
      refuse(shuttingDown('The gateway is shutting down.'));
      metrics.record({ route, status: res.statusCode, seconds: seconds(), measures });
      logRequest(req, res, requestId, route, started);
      return;
    }
    try {
      // Writes read their own body (the router is mounted without a body parser), bounded by
      // max_request_body_bytes; other methods never read one.
      const batchLimit = parts.expansions?.bodyLimit?.(req.path, config);
      const reads = responder.readsBody(req.method);
      // An octet-stream body is bytes, not text (a PostgREST call's bytea argument); the same limit.
      const octets = reads && batchLimit === undefined && isOctetStream(req.headers['content-type']);
      const body = !reads || octets ? undefined : batchLimit === undefined ? await readBody(req, config.maxRequestBodyBytes) : await readBody(req, batchLimit, 'max_batch_body_bytes');
      const request = digestRequest(req, requestId, body, octets ? await readBodyBytes(req, config.maxRequestBodyBytes) : undefined);
      try {
        if (!parts.isStarted()) await parts.whenStarted();
      } catch {
        throw new GatewayError('SERVICE_UNAVAILABLE', 'The gateway is not ready: schema discovery or the database role check failed.', { headers: { 'Retry-After': '5' } });
      }
      const db = measuredDatabase(parts.database(readsFromPrimary(request)), measures);
      const ctx: GatewayContext = { request, config, schema: parts.schema(), db, measures };
      res.locals.gateway = ctx;
      if (describe.matches(request, ctx.schema)) {
        route = 'openapi';
        await describe.respond(ctx, res, req.baseUrl);
        return;
      }
      const expand = parts.expansions?.expand(request, ctx.schema, config);
      if (expand) {
        // Several single requests in one transaction, each through the stages (run-expansion.ts).
        route = 'batch';
        const identity = await authenticate(stages, ctx);
        const withIdentity = Object.assign(ctx, { identity });
        const answer = await runExpansion(withIdentity, expand(), {
          stages,
          render: parts.expansions!.render,
          ...(limiter ? { admit: (c) => limiter.admit(req, res, c.identity, rateLimitKinds(c.command)) } : {}),
        });
        if (ticket.aborted) return;
        timing();
        res.statusCode = answer.status;
        if (answer.body === null) res.end();
        else sendJson(res, answer.body);
        return;
      }
      const result = await runPipeline(stages, ctx, limiter && ((c) => limiter.admit(req, res, c.identity, rateLimitKinds(c.command))));
      // Answered 503 by a drain that timed out: the response is gone.
      if (ticket.aborted) return void (await result.stream?.close());
      route = operationOf(ctx.command!);
      showPattern(res, ctx);
      timing();
      // A promise only when the door writes as rows arrive (an export, docs/querying.md, "Exports").
      const sending = responder.send(res, ctx.command!, ctx.plan!, result, requestId);
      if (sending) await sending;
    } catch (err) {
      if (ticket.aborted) return;
      const ctx = res.locals.gateway as GatewayContext | undefined;
      if (ctx?.command && route !== 'batch') {
        route = operationOf(ctx.command);
        showPattern(res, ctx);
      }
      if (isSchemaDrift(err)) parts.reloadAfterDrift();
      if (isGatewayError(err) && err.code === 'RATE_LIMITED') metrics.rateLimited(route);
      const answer = drain.draining ? err : await parts.withHints(err, ctx?.identity);
      if (ticket.aborted) return;
      timing();
      // For the request span's status (ops/tracing): the catalogue's code, nothing else.
      res.locals[answeredErrorKey] = isGatewayError(answer) ? answer.code : 'INTERNAL_ERROR';
      responder.sendError(res, answer, requestId, ctx?.identity?.source === 'anonymous');
    } finally {
      ticket.leave();
      metrics.record({ route, status: res.statusCode, seconds: seconds(), measures });
      logRequest(req, res, requestId, route, started);
    }
  };
}

/**
 * The kinds a request is counted under (docs/scaling-out.md#rate-limits): its command's, and an
 * upsert that may update an existing row (PUT, `Prefer: resolution=merge-duplicates`, the default
 * dialect's `on_conflict` update) counts against `update` too, so a caller past its update limit
 * cannot update through an insert.
 */
function rateLimitKinds(command: Command): readonly string[] {
  return command.kind === 'insert' && command.onConflict?.action === 'update' ? ['insert', 'update'] : [operationOf(command)];
}

/** While draining: the client should retry, on this or another instance. */
function shuttingDown(message: string): GatewayError {
  return new GatewayError('SERVICE_UNAVAILABLE', message, { headers: { 'Retry-After': '1', Connection: 'close' }, hint: 'Retry the request.' });
}
