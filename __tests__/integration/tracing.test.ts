/**
 * OpenTelemetry tracing (docs/observability.md) over HTTP against real PostgreSQL, as the
 * RLS-bound app role, with the real OpenTelemetry SDK: spans go to the SDK's in-memory exporter
 * and, through the OTLP/HTTP exporter, to a receiver in this file that decodes what arrives.
 * Checked: the request span and one child per stage, the database span's conventions (and no
 * statement text, no parameter, no tenant unless asked), a continued `traceparent`, a host's
 * active span as parent, error status with the catalogue's code, RPC and exports, the trace id
 * visible inside PostgreSQL during the statement, and nothing at all with tracing off.
 */
import { execFile } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { promisify } from 'node:util';
import type { AddressInfo } from 'node:net';
import express from 'express';
import request from 'supertest';
import { context, propagation, trace, SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { createGateway, type Gateway, type GatewayOptions } from '../../lib';
import { createTestDatabase, TENANT_A, TENANT_B, TEST_JWT_SECRET, type TestDatabase } from '../support/test-database';
import { tokenA } from '../support/gateway-app';

interface OtlpSpan {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId?: string;
  readonly name: string;
  readonly attributes?: { key: string; value: Record<string, unknown> }[];
  readonly status?: { code?: number; message?: string };
}

const memory = new InMemorySpanExporter();
const received: OtlpSpan[] = [];
const receivedTypes: string[] = [];
let receiver: http.Server;
let provider: NodeTracerProvider;
let db: TestDatabase;
const gateways: Gateway[] = [];

/** A minimal OTLP/HTTP collector: POST /v1/traces, JSON encoding (the exporter's default). */
function startReceiver(): Promise<http.Server> {
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      receivedTypes.push(String(req.headers['content-type']));
      if (req.method === 'POST' && req.url === '/v1/traces') {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { resourceSpans: { scopeSpans: { spans: OtlpSpan[] }[] }[] };
        for (const rs of body.resourceSpans) for (const ss of rs.scopeSpans) received.push(...ss.spans);
      }
      res.setHeader('Content-Type', 'application/json');
      res.end('{}');
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

beforeAll(async () => {
  receiver = await startReceiver();
  provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(memory)] });
  // Registers the tracer provider, the AsyncLocalStorage context manager and the W3C propagator.
  provider.register();
  db = await createTestDatabase();
  // What a function sees while the request's statement runs: the setting, and the backend's
  // application_name as pg_stat_activity shows it to every session.
  await db.admin.query(`
    CREATE FUNCTION public.trace_seen() RETURNS json LANGUAGE sql VOLATILE AS $$
      SELECT json_build_object(
        'trace_id', current_setting('tablegate.trace_id', true),
        'activity', (SELECT application_name FROM pg_stat_activity WHERE pid = pg_backend_pid()))
    $$;
    GRANT EXECUTE ON FUNCTION public.trace_seen() TO tablegate_app;`);
});

afterAll(async () => {
  await Promise.all(gateways.map((g) => g.close()));
  await db?.drop();
  await provider?.shutdown();
  trace.disable();
  context.disable();
  propagation.disable();
  await new Promise((resolve) => receiver?.close(resolve));
});

beforeEach(() => memory.reset());

async function appWith(options: Partial<GatewayOptions>, host?: (app: express.Express) => void): Promise<express.Express> {
  const gateway = createGateway({ databaseUrl: db.appUrl, jwtSecret: TEST_JWT_SECRET, maxExportRows: 1000, ...options } as GatewayOptions);
  gateways.push(gateway);
  await gateway.ready;
  const app = express();
  host?.(app);
  return app.use('/api', gateway);
}

const spans = (): ReadableSpan[] => memory.getFinishedSpans();
const named = (name: string): ReadableSpan => {
  const found = spans().filter((s) => s.name === name);
  expect(found.map((s) => s.name)).toEqual([name]);
  return found[0]!;
};
const parentOf = (span: ReadableSpan): string | undefined => span.parentSpanContext?.spanId;
const stageNames = ['auth', 'parse', 'policy', 'allow-list', 'compile', 'execute'].map((s) => `tablegate ${s}`);

describe('tracing on, an SDK recording every span', () => {
  let app: express.Express;
  beforeAll(async () => {
    app = await appWith({ tracing: true });
  });

  it('gives a list request a span, a child per stage and a database span with the conventions, continuing the traceparent', async () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const res = await request(app).get('/api/orders?limit=3&status=eq.paid').set('Authorization', `Bearer ${tokenA}`).set('traceparent', `00-${traceId}-00f067aa0ba902b7-01`);
    expect(res.status).toBe(200);
    const root = named('tablegate list');
    expect(root.kind).toBe(SpanKind.SERVER);
    expect(root.spanContext().traceId).toBe(traceId);
    expect(parentOf(root)).toBe('00f067aa0ba902b7');
    expect(root.attributes).toMatchObject({ 'http.request.method': 'GET', 'http.response.status_code': 200, 'tablegate.route': 'list' });
    for (const name of stageNames) {
      const stage = named(name);
      expect(parentOf(stage)).toBe(root.spanContext().spanId);
      expect(stage.spanContext().traceId).toBe(traceId);
    }
    const dbSpan = named('SELECT orders');
    expect(dbSpan.kind).toBe(SpanKind.CLIENT);
    expect(parentOf(dbSpan)).toBe(named('tablegate execute').spanContext().spanId);
    expect(dbSpan.attributes).toEqual({
      'db.system': 'postgresql',
      'db.system.name': 'postgresql',
      'db.operation.name': 'SELECT',
      'db.collection.name': 'orders',
      'db.namespace': 'public',
    });
    // Never the statement, a parameter, the query string or the tenant.
    const everything = JSON.stringify(spans().map((s) => [s.name, s.attributes, s.events, s.status]));
    expect(everything).not.toMatch(/FROM|set_config|paid|status=|limit|Bearer/);
    expect(everything).not.toContain(TENANT_A);
    expect(spans().every((s) => s.status.code !== SpanStatusCode.ERROR)).toBe(true);
  });

  it('sets the error status with the catalogue code on the request span and the stage that failed', async () => {
    expect((await request(app).get('/api/no_such_table').set('Authorization', `Bearer ${tokenA}`)).status).toBe(404);
    const root = named('tablegate request');
    expect(root.status).toEqual({ code: SpanStatusCode.ERROR, message: 'NOT_FOUND' });
    expect(root.attributes['error.type']).toBe('NOT_FOUND');
    expect(named('tablegate parse').status).toEqual({ code: SpanStatusCode.ERROR, message: 'NOT_FOUND' });
    expect(spans().map((s) => s.name).sort()).toEqual(['tablegate auth', 'tablegate parse', 'tablegate request']);

    memory.reset();
    expect((await request(app).get('/api/orders')).status).toBe(401);
    expect(named('tablegate auth').status).toEqual({ code: SpanStatusCode.ERROR, message: 'UNAUTHORIZED' });
    expect(named('tablegate request').status.message).toBe('UNAUTHORIZED');
  });

  it('covers an RPC call, and PostgreSQL sees the trace id while the statement runs', async () => {
    const res = await request(app).post('/api/rpc/trace_seen').set('Authorization', `Bearer ${tokenA}`).send({});
    expect(res.status).toBe(200);
    const dbSpan = named('SELECT trace_seen');
    expect(dbSpan.attributes).toMatchObject({ 'db.operation.name': 'SELECT', 'db.stored_procedure.name': 'trace_seen' });
    const { traceId, spanId } = dbSpan.spanContext();
    const seen = (typeof res.body === 'object' && 'data' in res.body ? res.body.data : res.body) as { trace_id: string; activity: string };
    expect(seen).toEqual({ trace_id: traceId, activity: `00-${traceId}-${spanId}-01` });
    expect(named('tablegate rpc').spanContext().traceId).toBe(traceId);
  });

  it('covers an export: the database span lasts until the last row is read', async () => {
    const res = await request(app).get('/api/orders?limit=1000').set('Accept', 'application/x-ndjson').set('Authorization', `Bearer ${tokenA}`);
    expect(res.status).toBe(200);
    const dbSpan = named('SELECT orders');
    const root = named('tablegate list');
    expect(dbSpan.spanContext().traceId).toBe(root.spanContext().traceId);
    expect(dbSpan.status.code).not.toBe(SpanStatusCode.ERROR);
    // The order in which spans ended (SimpleSpanProcessor hands each to the exporter as it ends),
    // not their end times: the SDK anchors each span's clock to Date.now(), so end times of two
    // spans compare only to about a millisecond.
    const ended = spans();
    expect(ended.indexOf(dbSpan)).toBeGreaterThan(ended.indexOf(named('tablegate execute')));
    expect(ended.indexOf(dbSpan)).toBeLessThan(ended.indexOf(root));
  });

  it('is a child of the host\'s active span when the host\'s HTTP instrumentation made one', async () => {
    const tracer = trace.getTracer('host');
    let hostSpanId = '';
    const hosted = await appWith({ tracing: true }, (host) =>
      host.use((req, res, next) => {
        const span = tracer.startSpan('GET /api/*', { kind: SpanKind.SERVER });
        hostSpanId = span.spanContext().spanId;
        res.on('finish', () => span.end());
        context.with(trace.setSpan(context.active(), span), next);
      }),
    );
    // A traceparent is ignored then: the host's span already continued it (or chose not to).
    expect((await request(hosted).get('/api/orders?limit=1').set('Authorization', `Bearer ${tokenA}`).set('traceparent', '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01')).status).toBe(200);
    const root = named('tablegate list');
    expect(root.kind).toBe(SpanKind.INTERNAL);
    expect(parentOf(root)).toBe(hostSpanId);
  });

  it('reaches an OTLP/HTTP collector from a host process with the Node SDK and the OTLP/HTTP exporter', async () => {
    const traceId = '0af7651916cd43dd8448eb211c80319c';
    const { stdout } = await promisify(execFile)(process.execPath, [path.resolve(__dirname, '../support/otlp-host.js')], {
      env: {
        ...process.env,
        OTLP_URL: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/v1/traces`,
        DATABASE_URL: db.appUrl,
        JWT_SECRET: TEST_JWT_SECRET,
        TOKEN: tokenA,
        TRACEPARENT: `00-${traceId}-b7ad6b7169203331-01`,
      },
      timeout: 20000,
    });
    expect(JSON.parse(stdout)).toEqual({ status: 200 });
    const ours = received.filter((s) => s.traceId === traceId);
    expect(ours.map((s) => s.name).sort()).toEqual(['SELECT orders', 'tablegate list', ...stageNames].sort());
    const dbSpan = ours.find((s) => s.name === 'SELECT orders')!;
    const attrs = Object.fromEntries((dbSpan.attributes ?? []).map((a) => [a.key, Object.values(a.value)[0]]));
    expect(attrs).toEqual({ 'db.system': 'postgresql', 'db.system.name': 'postgresql', 'db.operation.name': 'SELECT', 'db.collection.name': 'orders', 'db.namespace': 'public' });
    const root = ours.find((s) => s.name === 'tablegate list')!;
    expect(root.parentSpanId).toBe('b7ad6b7169203331');
    expect(ours.find((s) => s.name === 'tablegate execute')!.parentSpanId).toBe(root.spanId);
    expect(dbSpan.parentSpanId).toBe(ours.find((s) => s.name === 'tablegate execute')!.spanId);
    expect(receivedTypes).toContain('application/json');
  });
});

describe('tracing.tenant_attribute', () => {
  it('adds the tenant only when asked', async () => {
    const app = await appWith({ tracing: { tenantAttribute: true } });
    expect((await request(app).get('/api/orders?limit=1').set('Authorization', `Bearer ${tokenA}`)).status).toBe(200);
    expect(named('tablegate list').attributes['tablegate.tenant_id']).toBe(TENANT_A);
    expect(named('tablegate execute').attributes['tablegate.tenant_id']).toBe(TENANT_A);
    expect(JSON.stringify(spans().map((s) => s.attributes))).not.toContain(TENANT_B);
  });
});

describe('tracing off (the default)', () => {
  it('makes no span and sets nothing in PostgreSQL, even with an SDK registered', async () => {
    const app = await appWith({});
    const res = await request(app).post('/api/rpc/trace_seen').set('Authorization', `Bearer ${tokenA}`).set('traceparent', '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01').send({});
    expect(res.status).toBe(200);
    const seen = (typeof res.body === 'object' && 'data' in res.body ? res.body.data : res.body) as { trace_id: string | null; activity: string };
    // Null on a fresh session; '' on one where another gateway's transaction once set it (a
    // placeholder setting outlives SET LOCAL as an empty string: sessions are shared behind PgBouncer).
    expect(seen.trace_id ?? '').toBe('');
    expect(seen.activity).not.toMatch(/^00-/);
    expect(spans()).toEqual([]);
  });
});
