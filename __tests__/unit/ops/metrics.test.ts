/**
 * The gateway's metric set (lib/ops/metrics.ts) with hand-made sources, read back through
 * prom-client's own JSON view: what exists at 0, what one request records, bounded labels, the
 * scrape-time gauges, the prefix, a host registry (collision, close) and the process metrics.
 */
import { Counter, Registry } from 'prom-client';
import { GatewayConfigError } from '../../../lib/errors/gateway-config-error';
import { Metrics, reloadReasons, routeLabels, statusClass, type MetricsSources } from '../../../lib/ops/metrics';
import { authFailureReasons } from '../../../lib/pipeline/auth-failure-reasons';
import { newRequestMeasures, type RequestMeasures } from '../../../lib/pipeline/request-measures';

let pool = { total: 3, idle: 2, waiting: 0 };
let gss = { gssRetries: 0, gssFailures: 0, gssCircuitOpenings: 0, gssCircuitOpen: false };
const sources: MetricsSources = {
  pool: () => pool,
  schema: () => ({ tables: 7, functions: 2 }),
  connection: () => gss,
};
const measures = (over: Partial<RequestMeasures> = {}): RequestMeasures => ({ ...newRequestMeasures(), ...over });

async function series(metrics: Metrics, name: string) {
  const family = (await metrics.registry.getMetricsAsJSON()).find((m) => m.name === name);
  return family?.values ?? [];
}
async function value(metrics: Metrics, name: string, labels: Record<string, string> = {}, metricName = name) {
  const found = (await series(metrics, name)).filter((v) => ((v as { metricName?: string }).metricName ?? name) === metricName && Object.entries(labels).every(([k, l]) => String(v.labels[k]) === l));
  expect(found.length).toBeLessThanOrEqual(1);
  return found[0]?.value;
}

describe('Metrics', () => {
  beforeEach(() => {
    pool = { total: 3, idle: 2, waiting: 0 };
    gss = { gssRetries: 0, gssFailures: 0, gssCircuitOpenings: 0, gssCircuitOpen: false };
  });

  it('has every known label combination at 0 from the start', async () => {
    const metrics = new Metrics({ defaultMetrics: false }, sources);
    const requests = await series(metrics, 'tablegate_requests_total');
    expect(requests.map((v) => `${v.labels['route']}/${v.labels['status_class']}=${v.value}`).sort()).toEqual(
      routeLabels.flatMap((r) => ['2xx', '4xx', '5xx'].map((c) => `${r}/${c}=0`)).sort(),
    );
    expect(routeLabels).toEqual(['list', 'get', 'read', 'aggregate', 'explain', 'insert', 'update', 'delete', 'rpc', 'contracts', 'batch', 'unknown']);
    expect((await series(metrics, 'tablegate_auth_failures_total')).map((v) => v.labels['reason'])).toEqual([...authFailureReasons]);
    expect((await series(metrics, 'tablegate_schema_reloads_total'))).toHaveLength(reloadReasons.length * 2);
    expect((await series(metrics, 'tablegate_rate_limited_total'))).toHaveLength(routeLabels.length);
    // Histograms get series when they observe something, not before.
    expect(await series(metrics, 'tablegate_request_duration_seconds')).toEqual([]);
  });

  it('records one request in the counter and the three histograms', async () => {
    const metrics = new Metrics({ defaultMetrics: false }, sources);
    metrics.record({ route: 'list', status: 200, seconds: 0.02, measures: measures({ dbMs: 15, dbCalls: 1 }) });
    const labels = { route: 'list', status_class: '2xx' };
    expect(await value(metrics, 'tablegate_requests_total', labels)).toBe(1);
    expect(await value(metrics, 'tablegate_request_duration_seconds', labels, 'tablegate_request_duration_seconds_sum')).toBeCloseTo(0.02, 9);
    expect(await value(metrics, 'tablegate_request_db_duration_seconds', labels, 'tablegate_request_db_duration_seconds_sum')).toBeCloseTo(0.015, 9);
    expect(await value(metrics, 'tablegate_request_gateway_duration_seconds', labels, 'tablegate_request_gateway_duration_seconds_sum')).toBeCloseTo(0.005, 9);
    expect(await value(metrics, 'tablegate_request_db_duration_seconds', { ...labels, le: '0.025' }, 'tablegate_request_db_duration_seconds_bucket')).toBe(1);
    expect(await value(metrics, 'tablegate_request_db_duration_seconds', { ...labels, le: '0.01' }, 'tablegate_request_db_duration_seconds_bucket')).toBe(0);
  });

  it('observes database time only for requests that reached the database, and counts an auth failure once', async () => {
    const metrics = new Metrics({ defaultMetrics: false }, sources);
    metrics.record({ route: 'unknown', status: 401, seconds: 0.001, measures: measures({ authMs: 0.5, authFailure: 'expired' }) });
    const labels = { route: 'unknown', status_class: '4xx' };
    expect(await value(metrics, 'tablegate_request_db_duration_seconds', labels, 'tablegate_request_db_duration_seconds_count')).toBeUndefined();
    expect(await value(metrics, 'tablegate_request_gateway_duration_seconds', labels, 'tablegate_request_gateway_duration_seconds_count')).toBe(1);
    expect(await value(metrics, 'tablegate_auth_failures_total', { reason: 'expired' })).toBe(1);
    expect(await value(metrics, 'tablegate_auth_failures_total', { reason: 'bad_signature' })).toBe(0);
  });

  it('keeps labels bounded: an unknown route is `unknown`, a status only its class', async () => {
    const metrics = new Metrics({ defaultMetrics: false }, sources);
    metrics.record({ route: 'users"} 1\nevil', status: 404, seconds: 0, measures: measures() });
    metrics.record({ route: '__proto__', status: 418, seconds: 0, measures: measures() });
    metrics.rateLimited('constructor');
    expect(await value(metrics, 'tablegate_requests_total', { route: 'unknown', status_class: '4xx' })).toBe(2);
    expect(await series(metrics, 'tablegate_requests_total')).toHaveLength(routeLabels.length * 3);
    expect(await value(metrics, 'tablegate_rate_limited_total', { route: 'unknown' })).toBe(1);
    expect([statusClass(200), statusClass(304), statusClass(429), statusClass(503), statusClass(99), statusClass(600)]).toEqual(['2xx', '3xx', '4xx', '5xx', 'other', 'other']);
  });

  it('reads the pool, the schema and the GSS totals at each scrape', async () => {
    const metrics = new Metrics({ defaultMetrics: false }, sources);
    expect(await value(metrics, 'tablegate_pool_connections', { state: 'total' })).toBe(3);
    expect(await value(metrics, 'tablegate_schema_objects', { kind: 'tables' })).toBe(7);
    pool = { total: 5, idle: 0, waiting: 4 };
    gss = { gssRetries: 6, gssFailures: 2, gssCircuitOpenings: 1, gssCircuitOpen: true };
    expect(await value(metrics, 'tablegate_pool_connections', { state: 'waiting' })).toBe(4);
    expect(await value(metrics, 'tablegate_pool_connections', { state: 'idle' })).toBe(0);
    expect(await value(metrics, 'tablegate_gss_retries_total')).toBe(6);
    expect(await value(metrics, 'tablegate_gss_failures_total')).toBe(2);
    expect(await value(metrics, 'tablegate_gss_circuit_openings_total')).toBe(1);
    expect(await value(metrics, 'tablegate_gss_circuit_open')).toBe(1);
    expect(await series(metrics, 'tablegate_replica_up')).toEqual([]);
  });

  it('counts schema reloads by reason and result', async () => {
    const metrics = new Metrics({ defaultMetrics: false }, sources);
    metrics.recordReload('notify', 'ok');
    metrics.recordReload('notify', 'ok');
    metrics.recordReload('poll', 'error');
    expect(await value(metrics, 'tablegate_schema_reloads_total', { reason: 'notify', result: 'ok' })).toBe(2);
    expect(await value(metrics, 'tablegate_schema_reloads_total', { reason: 'poll', result: 'error' })).toBe(1);
    expect(await value(metrics, 'tablegate_schema_reloads_total', { reason: 'start', result: 'ok' })).toBe(0);
  });

  it('keeps two gateways in one process apart: each has its own registry', async () => {
    const a = new Metrics({ defaultMetrics: false }, sources);
    const b = new Metrics({ defaultMetrics: false }, sources);
    a.record({ route: 'get', status: 200, seconds: 0, measures: measures() });
    expect(await value(a, 'tablegate_requests_total', { route: 'get', status_class: '2xx' })).toBe(1);
    expect(await value(b, 'tablegate_requests_total', { route: 'get', status_class: '2xx' })).toBe(0);
  });

  it("registers into a host's registry under the prefix, refuses a name it already holds, and frees the names on close()", async () => {
    const registry = new Registry();
    new Counter({ name: 'host_jobs_total', help: 'h', registers: [registry] });
    const first = new Metrics({ registry }, sources);
    expect(first.registry).toBe(registry);
    expect(() => new Metrics({ registry }, sources)).toThrow(GatewayConfigError);
    const names = () => registry.getMetricsAsArray().map((m) => (m as unknown as { name: string }).name);
    // Refused all or nothing: the failed attempt left nothing behind.
    expect(names().filter((n) => !n.startsWith('tablegate_'))).toEqual(['host_jobs_total']);
    const second = new Metrics({ registry, prefix: 'orders_' }, sources);
    expect(names()).toContain('orders_requests_total');
    first.close();
    expect(names().some((n) => n.startsWith('tablegate_'))).toBe(false);
    expect(names()).toContain('host_jobs_total');
    second.close();
    expect(names()).toEqual(['host_jobs_total']);
  });

  it("renders the process metrics with its own registry only, and in a host's only when asked, once", async () => {
    const own = await new Metrics({}, sources).render();
    expect(own.contentType).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(own.body).toContain('# TYPE process_cpu_user_seconds_total counter');
    expect((await new Metrics({ defaultMetrics: false }, sources).render()).body).not.toContain('process_cpu_user_seconds_total');
    const host = new Registry();
    expect((await new Metrics({ registry: host }, sources).render()).body).not.toContain('process_cpu_user_seconds_total');
    const asked = new Registry();
    new Metrics({ registry: asked, defaultMetrics: true }, sources);
    expect(await asked.metrics()).toContain('# TYPE process_cpu_user_seconds_total counter');
    expect(() => new Metrics({ registry: asked, prefix: 'again_', defaultMetrics: true }, sources)).toThrow(/already holds the process metrics/);
  });
});
