/**
 * The gateway's Prometheus metrics, kept by prom-client (docs/architecture.md, "Metrics", has the
 * table of every series). One registry per gateway by default, so that two gateways in one
 * process never collide; or the host's registry (`metrics: { registry }`), into which they are
 * registered under `prefix` so that the host's own `/metrics` shows them beside its own.
 *
 * In: what each request measured (route kind, status, durations), auth failures, schema reloads,
 * and read-only sources that the scrape reads (pool, schema cache, GSS counters, replicas).
 * Out: the exposition text of GET /metrics.
 * Never: a label value made from request text. Every label has a fixed vocabulary (route kind,
 * status class, auth failure reason, reload reason) or comes from the configuration (a replica's
 * position and address), so an attacker cannot add series with invented table names.
 *
 * Adding a metric: create it in the constructor with `registers: []` and push it onto `all`
 * (the prefix, the collision check, registration and removal on close() then apply), give it a
 * recording method (or a `collect()` that reads a source at scrape time), and add a row to the
 * table in docs/architecture.md.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, type Metric, Registry } from 'prom-client';
import type { OperationName } from '../command/command';
import type { ConnectionStats } from '../db/connection/connection-stats';
import type { ReplicaStatus } from '../db/replica-set';
import { GatewayConfigError } from '../errors/gateway-config-error';
import { authFailureReasons } from '../pipeline/auth-failure-reasons';
import type { RequestMeasures } from '../pipeline/request-measures';
import type { MetricsOptions } from './metrics-options';
import { processRegistry } from './process-metrics';
import { replicaMetrics } from './replica-metrics';
import { exportMetrics } from './export-metrics';
import type { ExportStats } from './export-stats';
import { changeFeedMetrics } from './change-feed-metrics';
import type { ChangeFeedStats } from './change-feed-stats';

/** Seconds; from 1 ms (a point read's database time) to 10 s. */
const buckets = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** Every operation name (a command kind, or `explain`), checked against the Command union: a new kind fails the build until it is listed. */
const commandKinds: Readonly<Record<OperationName, true>> = { list: true, get: true, read: true, aggregate: true, explain: true, insert: true, update: true, delete: true, rpc: true, contracts: true };
/**
 * `route` label values: the command kinds, `batch` for a request that ran several (a batch, a
 * nested insert, a bulk update: docs/writing.md), and `unknown` before (or without) a parsed command.
 */
export const routeLabels: readonly string[] = [...Object.keys(commandKinds), 'batch', 'unknown'];
/** Status classes that exist at 0 from the start; others appear when they first occur. */
const initialStatusClasses = ['2xx', '4xx', '5xx'];
/** `reason` of a schema discovery: lib/create-gateway.ts (start, manual, drift) and lib/schema/schema-watcher.ts. */
export const reloadReasons = ['start', 'manual', 'drift', 'notify', 'poll', 'reconnect'] as const;
export type ReloadReason = (typeof reloadReasons)[number];

export const defaultMetricsPrefix = 'tablegate_';

export interface MetricsSources {
  pool(): { total: number; idle: number; waiting: number };
  schema(): { tables: number; functions: number } | undefined;
  /** GSS counters of the connection policy; undefined (all 0) when the gateway was given a pool. */
  connection(): ConnectionStats | undefined;
  /** Given only with read_replica_urls: the replicas' series exist only then. */
  replicas?: () => readonly ReplicaStatus[] | undefined;
  /** The streamed exports' counters (lib/ops/export-metrics.ts); no export series without them. */
  exports?: ExportStats;
  /** The change feed's counters (lib/ops/change-feed-metrics.ts); no feed series without them. */
  changeFeed?: ChangeFeedStats;
}

export class Metrics {
  /** Where the gateway's series live: its own registry, or the host's. */
  readonly registry: Registry;
  private readonly own: boolean;
  private readonly processMetrics: boolean;
  private readonly all: Metric[] = [];
  private readonly requests: Counter<'route' | 'status_class'>;
  private readonly duration: Histogram<'route' | 'status_class'>;
  private readonly dbDuration: Histogram<'route' | 'status_class'>;
  private readonly gatewayDuration: Histogram<'route' | 'status_class'>;
  private readonly authFailures: Counter<'reason'>;
  private readonly rateLimitedRequests: Counter<'route'>;
  private readonly reloads: Counter<'reason' | 'result'>;
  private readonly mcpToolCalls: Counter<'tool' | 'outcome'>;

  constructor(setup: MetricsOptions, sources: MetricsSources) {
    this.own = setup.registry === undefined;
    this.registry = setup.registry ?? new Registry();
    const p = setup.prefix ?? defaultMetricsPrefix;
    const all = this.all;
    const routeStatus = ['route', 'status_class'] as const;

    all.push((this.requests = new Counter({ name: `${p}requests_total`, help: 'Requests answered, by route kind and status class.', labelNames: routeStatus, registers: [] })));
    all.push((this.duration = new Histogram({ name: `${p}request_duration_seconds`, help: 'Time from receiving a request to answering it, by route kind and status class.', labelNames: routeStatus, buckets, registers: [] })));
    all.push((this.dbDuration = new Histogram({ name: `${p}request_db_duration_seconds`, help: 'Time a request spent in the database (waiting for a pool connection included); only requests that reached it.', labelNames: routeStatus, buckets, registers: [] })));
    all.push((this.gatewayDuration = new Histogram({ name: `${p}request_gateway_duration_seconds`, help: 'Time a request spent in the gateway itself: its duration minus its database time.', labelNames: routeStatus, buckets, registers: [] })));
    all.push((this.authFailures = new Counter({ name: `${p}auth_failures_total`, help: 'Requests the auth stage refused, by reason.', labelNames: ['reason'], registers: [] })));
    all.push((this.rateLimitedRequests = new Counter({ name: `${p}rate_limited_total`, help: 'Requests refused with 429 by rate_limit, by route kind.', labelNames: ['route'], registers: [] })));
    all.push((this.mcpToolCalls = new Counter({ name: `${p}mcp_tool_calls_total`, help: 'Tool calls through the agents\' door (MCP), by tool and outcome (`ok` or the error code).', labelNames: ['tool', 'outcome'], registers: [] })));
    all.push((this.reloads = new Counter({ name: `${p}schema_reloads_total`, help: 'Schema discoveries, by what caused them and their result.', labelNames: ['reason', 'result'], registers: [] })));

    all.push(
      new Gauge({
        name: `${p}pool_connections`, help: 'Connections of the database pool: total, idle, and requests waiting for one.', labelNames: ['state'], registers: [],
        collect() {
          const pool = sources.pool();
          this.set({ state: 'total' }, pool.total);
          this.set({ state: 'idle' }, pool.idle);
          this.set({ state: 'waiting' }, pool.waiting);
        },
      }),
      new Gauge({
        name: `${p}schema_objects`, help: 'Tables and functions in the schema cache.', labelNames: ['kind'], registers: [],
        collect() {
          const schema = sources.schema();
          this.set({ kind: 'tables' }, schema?.tables ?? 0);
          this.set({ kind: 'functions' }, schema?.functions ?? 0);
        },
      }),
      // The connection policy keeps its own totals; a scrape copies them.
      totalOf(`${p}gss_retries_total`, 'GSSAPI token attempts retried (gss_connect_retries).', () => sources.connection()?.gssRetries ?? 0),
      totalOf(`${p}gss_failures_total`, 'Database connections that failed during GSSAPI authentication.', () => sources.connection()?.gssFailures ?? 0),
      totalOf(`${p}gss_circuit_openings_total`, 'Times the GSS circuit opened (gss_circuit_threshold).', () => sources.connection()?.gssCircuitOpenings ?? 0),
      new Gauge({
        name: `${p}gss_circuit_open`, help: '1 while the GSS circuit is open (new connections fail fast), else 0.', registers: [],
        collect() {
          this.set(sources.connection()?.gssCircuitOpen === true ? 1 : 0);
        },
      }),
      ...(sources.replicas ? replicaMetrics(p, sources.replicas) : []),
      ...(sources.exports ? exportMetrics(p, sources.exports) : []),
      ...(sources.changeFeed ? changeFeedMetrics(p, sources.changeFeed) : []),
    );

    for (const route of routeLabels) {
      for (const statusClass of initialStatusClasses) this.requests.inc({ route, status_class: statusClass }, 0);
      this.rateLimitedRequests.inc({ route }, 0);
    }
    for (const reason of authFailureReasons) this.authFailures.inc({ reason }, 0);
    for (const reason of reloadReasons) for (const result of ['ok', 'error']) this.reloads.inc({ reason, result }, 0);

    this.register(setup);
    this.processMetrics = this.own && setup.defaultMetrics !== false;
    // Made now, so that GC and event loop observations start with the gateway, not the first scrape.
    if (this.processMetrics) processRegistry();
  }

  /** One answered request: its route kind (a command kind or `unknown`), status, duration and measures. */
  record(request: { readonly route: string; readonly status: number; readonly seconds: number; readonly measures: RequestMeasures }): void {
    const { seconds, measures } = request;
    const labels = { route: routeLabel(request.route), status_class: statusClass(request.status) };
    const dbSeconds = measures.dbMs / 1000;
    this.requests.inc(labels);
    this.duration.observe(labels, seconds);
    this.gatewayDuration.observe(labels, Math.max(0, seconds - dbSeconds));
    // Only requests that reached the database, so that its histogram is not swamped by zeros.
    if (measures.dbCalls > 0) this.dbDuration.observe(labels, dbSeconds);
    if (measures.authFailure !== undefined) this.authFailures.inc({ reason: measures.authFailure });
  }

  rateLimited(route: string): void {
    this.rateLimitedRequests.inc({ route: routeLabel(route) });
  }

  /**
   * One MCP tool call (docs/mcp.md): `tool` is one of the door's tool names (or `unknown`),
   * `outcome` is `ok` or a code of the catalogue, so both label sets stay bounded.
   */
  mcpToolCall(tool: string, outcome: string): void {
    this.mcpToolCalls.inc({ tool, outcome });
  }

  /** One schema discovery and its result. */
  recordReload(reason: ReloadReason, result: 'ok' | 'error'): void {
    this.reloads.inc({ reason, result });
  }

  /** GET /metrics: the registry, plus the process metrics when the registry is the gateway's own. */
  async render(): Promise<{ contentType: string; body: string }> {
    const body = await this.registry.metrics();
    const process = this.processMetrics ? await processRegistry().metrics() : '';
    return { contentType: this.registry.contentType, body: body + process };
  }

  /** Takes the gateway's series out of a host's registry, so that a new gateway can register again. */
  close(): void {
    if (this.own) return;
    for (const metric of this.all) this.registry.removeSingleMetric(nameOf(metric));
  }

  /**
   * All or nothing: a name the host registry already holds (another gateway, or the host's own
   * metric) is refused before any series is added.
   */
  private register(setup: MetricsOptions): void {
    const taken = this.all.map(nameOf).find((name) => this.registry.getSingleMetric(name) !== undefined);
    if (taken !== undefined) {
      throw new GatewayConfigError(
        `option \`metrics.registry\` already holds a metric named ${taken} (another gateway registered into it?); give each gateway sharing a registry its own \`metrics.prefix\`, e.g. prefix: 'orders_'`,
        'metrics.registry',
      );
    }
    for (const metric of this.all) this.registry.registerMetric(metric);
    // A host registry gets the process metrics only when asked (it may well collect them itself).
    if (!this.own && setup.defaultMetrics === true) {
      try {
        collectDefaultMetrics({ register: this.registry });
      } catch (err) {
        this.close();
        throw new GatewayConfigError(`option \`metrics.defaultMetrics\`: the registry already holds the process metrics (${err instanceof Error ? err.message : String(err)}); leave defaultMetrics unset`, 'metrics.defaultMetrics');
      }
    }
  }
}

/** A counter that reports a total kept elsewhere: each scrape sets it to that total. */
function totalOf(name: string, help: string, total: () => number): Counter {
  return new Counter({
    name, help, registers: [],
    collect() {
      this.reset();
      this.inc(total());
    },
  });
}

/** prom-client keeps the name on the metric object; its type declarations do not show it. */
function nameOf(metric: Metric): string {
  return (metric as unknown as { name: string }).name;
}

function routeLabel(route: string): string {
  return Object.hasOwn(commandKinds, route) ? route : 'unknown';
}

/** `2xx`, `4xx`, ...: bounded whatever status a response carries. */
export function statusClass(status: number): string {
  return status >= 100 && status < 600 ? `${Math.floor(status / 100)}xx` : 'other';
}
