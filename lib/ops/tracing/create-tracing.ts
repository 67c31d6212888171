/**
 * OpenTelemetry tracing (docs/observability.md). Decided once, at createGateway: with `tracing`
 * off (the default) this returns undefined and the request path is the untraced code, nothing
 * wrapped. With it on, the handler, each stage and the Database port are wrapped:
 *
 *   tablegate <kind>            the request (SERVER, or INTERNAL under the host's own span)
 *     tablegate auth | parse | policy | allow-list | compile | execute
 *       SELECT items            the database call (CLIENT; OTel database conventions)
 *
 * An incoming `traceparent` is continued through the registered propagator, as HTTP
 * instrumentation does; when the host's instrumentation already made an active span, the request
 * span is its child instead. Without a registered SDK the api hands out non-recording spans.
 * Never recorded: the statement text, its parameters, the token, the query string, and the tenant
 * unless `tracing.tenant_attribute` is on (trace backends are often shared).
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Request, Response } from 'express';
import type { ResolvedConfig, TracingConfig } from '../../pipeline/resolved-config';
import { GatewayConfigError } from '../../errors/gateway-config-error';
import { isGatewayError } from '../../errors/gateway-error';
import type { Database } from '../../pipeline/database';
import type { PlanTrace } from '../../pipeline/plan';
import type { RowStream } from '../../pipeline/row-stream';
import { stageNames, type StageName } from '../../pipeline/stage-names';
import type { GatewayContext, Stages } from '../../pipeline/stage-types';
import { operationOf } from '../../command/command';
import { dbOperationOf, dbSpanName } from './db-operation';
import { loadTraceApi, type TraceApi } from './load-trace-api';

type Api = typeof TraceApi;
type Span = TraceApi.Span;
type Handler = (req: Request, res: Response) => Promise<void>;

export interface Tracing {
  /** The per-request handler inside a request span. */
  handler(handle: Handler): Handler;
  /** Each stage inside its own span; execute's Database calls inside database spans. */
  stages(stages: Stages): Stages;
}

/** The span names of the stages (the option names stay camelCase). */
const spanNames: Record<StageName, string> = {
  auth: 'tablegate auth',
  parse: 'tablegate parse',
  policy: 'tablegate policy',
  allowList: 'tablegate allow-list',
  compile: 'tablegate compile',
  execute: 'tablegate execute',
};

/** Where the request handler leaves the error it answered with, for the request span's status. */
export const answeredErrorKey = 'tablegateErrorCode';

/** `load` is for tests; a gateway passes nothing and the installed api is required. */
export function createTracing(config: ResolvedConfig, version: string, load: () => Api | undefined = loadTraceApi): Tracing | undefined {
  if (config.tracing === undefined || config.tracing === false) return undefined;
  const api = load();
  if (api === undefined) {
    // Fail closed: the operator asked for traces, so none at all is a configuration error.
    throw new GatewayConfigError('tracing is on but @opentelemetry/api is not installed; run `npm install @opentelemetry/api` (and an OpenTelemetry SDK, docs/observability.md) or turn tracing off', 'tracing');
  }
  const options: TracingConfig = config.tracing === true ? {} : config.tracing;
  const tenantAttribute = options.tenantAttribute === true;
  const tracer = api.trace.getTracer('tablegate', version);
  const { SpanKind, SpanStatusCode } = api;

  const fail = (span: Span, err: unknown): void => {
    // Only the catalogue's code: an unexpected error's message may quote SQL or data.
    const code = isGatewayError(err) ? err.code : 'INTERNAL_ERROR';
    span.setAttribute('error.type', code);
    span.setStatus({ code: SpanStatusCode.ERROR, message: code });
  };
  /** Runs `fn` inside `span` (as the active span), ending it when `fn` settles. */
  const within = <T>(span: Span, fn: () => T | Promise<T>): Promise<T> =>
    api.context.with(api.trace.setSpan(api.context.active(), span), async () => {
      try {
        return await fn();
      } catch (err) {
        fail(span, err);
        throw err;
      } finally {
        span.end();
      }
    });

  const traceOf = (span: Span): PlanTrace | undefined => {
    const sc = span.spanContext();
    if (!api.isSpanContextValid(sc)) return undefined;
    return { traceId: sc.traceId, traceparent: `00-${sc.traceId}-${sc.spanId}-${(sc.traceFlags & 0xff).toString(16).padStart(2, '0')}` };
  };

  const tracedDatabase = (db: Database, ctx: GatewayContext): Database => {
    const op = dbOperationOf(ctx.command!);
    const attributes: TraceApi.Attributes = {
      'db.system': 'postgresql',
      'db.system.name': 'postgresql',
      'db.operation.name': op.operation,
      ...(op.collection === undefined ? {} : { 'db.collection.name': op.collection }),
      ...(op.procedure === undefined ? {} : { 'db.stored_procedure.name': op.procedure }),
      ...(op.namespace === undefined ? {} : { 'db.namespace': op.namespace }),
    };
    const start = (): Span => tracer.startSpan(dbSpanName(op), { kind: SpanKind.CLIENT, attributes }, api.context.active());
    const withTrace = <P extends object>(span: Span, plan: P): P => {
      const trace = traceOf(span);
      return trace === undefined ? plan : { ...plan, trace };
    };
    return {
      run: (identity, plan) => {
        const span = start();
        return within(span, () => db.run(identity, withTrace(span, plan)));
      },
      locateFailingRow: (identity, probe, isRowError) => within(start(), () => db.locateFailingRow(identity, probe, isRowError)),
      // A batch's transaction: one span from checkout to COMMIT; its statements run inside it.
      ...(db.transaction ? { transaction: (identity, options, work) => within(start(), () => db.transaction!(identity, options, work)) } : {}),
      // An export's span lasts until its last batch is read or the stream is closed.
      ...(db.stream
        ? {
            stream: async (identity, plan) => {
              const span = start();
              let rows: RowStream;
              try {
                rows = await api.context.with(api.trace.setSpan(api.context.active(), span), () => db.stream!(identity, withTrace(span, plan)));
              } catch (err) {
                fail(span, err);
                span.end();
                throw err;
              }
              return endsSpan(rows, span, fail);
            },
          }
        : {}),
    };
  };

  const stageAttributes = (ctx: GatewayContext): TraceApi.Attributes | undefined =>
    tenantAttribute && ctx.identity ? { 'tablegate.tenant_id': ctx.identity.tenantId } : undefined;

  return {
    handler(handle) {
      return (req, res) => {
        const active = api.context.active();
        // The host's HTTP instrumentation made a span: ours is its child. Otherwise continue the
        // caller's traceparent, through the registered propagator (W3C Trace Context by default).
        const hostSpan = api.trace.getSpan(active) !== undefined;
        const parent = hostSpan ? active : api.propagation.extract(active, req.headers, headerGetter);
        const span = tracer.startSpan(
          'tablegate request',
          { kind: hostSpan ? SpanKind.INTERNAL : SpanKind.SERVER, attributes: { 'http.request.method': req.method } },
          parent,
        );
        return api.context.with(api.trace.setSpan(parent, span), async () => {
          try {
            await handle(req, res);
          } finally {
            const ctx = res.locals['gateway'] as GatewayContext | undefined;
            const kind = ctx?.command ? operationOf(ctx.command) : undefined;
            if (kind !== undefined) span.updateName(`tablegate ${kind}`);
            if (kind !== undefined) span.setAttribute('tablegate.route', kind);
            span.setAttribute('http.response.status_code', res.statusCode);
            span.setAttribute('tablegate.request_id', String(res.getHeader('X-Request-Id') ?? ''));
            if (tenantAttribute && ctx?.identity) span.setAttribute('tablegate.tenant_id', ctx.identity.tenantId);
            const code = res.locals[answeredErrorKey] as string | undefined;
            if (code !== undefined) {
              span.setAttribute('error.type', code);
              span.setStatus({ code: SpanStatusCode.ERROR, message: code });
            }
            span.end();
          }
        });
      };
    },
    stages(stages) {
      const traced = { ...stages } as Record<StageName, (ctx: never) => unknown>;
      for (const name of stageNames) {
        const stage = stages[name] as (ctx: GatewayContext) => unknown;
        traced[name] = ((ctx: GatewayContext) => {
          const span = tracer.startSpan(spanNames[name], { attributes: stageAttributes(ctx) }, api.context.active());
          // Execute's database calls get their own spans, children of execute's.
          if (name === 'execute') return within(span, () => stage({ ...ctx, db: tracedDatabase(ctx.db, ctx) }));
          return within(span, () => stage(ctx));
        }) as (ctx: never) => unknown;
      }
      return Object.freeze(traced) as unknown as Stages;
    },
  };
}

const headerGetter: TraceApi.TextMapGetter<IncomingHttpHeaders> = {
  keys: (carrier) => Object.keys(carrier),
  get: (carrier, key) => carrier[key.toLowerCase()],
};

/** The stream, ending `span` once it is read to the end, fails or is closed. */
function endsSpan(rows: RowStream, span: Span, fail: (span: Span, err: unknown) => void): RowStream {
  let ended = false;
  const end = (): void => {
    if (!ended) span.end();
    ended = true;
  };
  return {
    async next() {
      try {
        const batch = await rows.next();
        if (batch === null) end();
        return batch;
      } catch (err) {
        if (!ended) fail(span, err);
        end();
        throw err;
      }
    },
    async close() {
      try {
        await rows.close();
      } finally {
        end();
      }
    },
  };
}
