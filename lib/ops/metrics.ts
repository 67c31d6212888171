/**
 * In-process counters for GET /metrics, in the Prometheus text exposition format
 * (https://prometheus.io/docs/instrumenting/exposition_formats/). Label values come from a
 * fixed vocabulary (route kind, status code), never from caller text, so cardinality is bounded.
 */
import type { ConnectionStats } from '../db/connection/connection-stats';

const buckets = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export interface MetricsSnapshotSource {
  pool(): { total: number; idle: number; waiting: number };
  schema(): { tables: number; functions: number } | undefined;
  /** GSS counters of the connection policy; all 0 when the gateway was given a pool. */
  connection?(): ConnectionStats | undefined;
}

export class Metrics {
  private readonly requests = new Map<string, number>();
  private readonly durationCounts = new Map<string, number[]>();
  private readonly durationSums = new Map<string, number>();
  private readonly reloads = new Map<string, number>();

  /** One schema discovery: `reason` is start, manual, drift, notify, poll or reconnect; `result` ok or error. */
  recordReload(reason: string, result: 'ok' | 'error'): void {
    const key = `${reason}\u0000${result}`;
    this.reloads.set(key, (this.reloads.get(key) ?? 0) + 1);
  }

  record(route: string, status: number, seconds: number): void {
    const key = `${route}\u0000${status}`;
    this.requests.set(key, (this.requests.get(key) ?? 0) + 1);
    let counts = this.durationCounts.get(route);
    if (!counts) {
      counts = new Array<number>(buckets.length + 1).fill(0);
      this.durationCounts.set(route, counts);
    }
    const index = buckets.findIndex((b) => seconds <= b);
    counts[index === -1 ? buckets.length : index]!++;
    this.durationSums.set(route, (this.durationSums.get(route) ?? 0) + seconds);
  }

  render(source: MetricsSnapshotSource): string {
    const lines: string[] = [];
    lines.push('# HELP tablegate_requests_total Requests handled, by route kind and HTTP status.');
    lines.push('# TYPE tablegate_requests_total counter');
    for (const [key, n] of this.requests) {
      const [route, status] = key.split('\u0000');
      lines.push(`tablegate_requests_total{route="${route}",status="${status}"} ${n}`);
    }
    lines.push('# HELP tablegate_request_duration_seconds Request duration, by route kind.');
    lines.push('# TYPE tablegate_request_duration_seconds histogram');
    for (const [route, counts] of this.durationCounts) {
      let cumulative = 0;
      buckets.forEach((b, i) => {
        cumulative += counts[i]!;
        lines.push(`tablegate_request_duration_seconds_bucket{route="${route}",le="${b}"} ${cumulative}`);
      });
      cumulative += counts[buckets.length]!;
      lines.push(`tablegate_request_duration_seconds_bucket{route="${route}",le="+Inf"} ${cumulative}`);
      lines.push(`tablegate_request_duration_seconds_sum{route="${route}"} ${this.durationSums.get(route) ?? 0}`);
      lines.push(`tablegate_request_duration_seconds_count{route="${route}"} ${cumulative}`);
    }
    const pool = source.pool();
    lines.push('# HELP tablegate_pool_connections Database pool connections.', '# TYPE tablegate_pool_connections gauge');
    lines.push(`tablegate_pool_connections{state="total"} ${pool.total}`, `tablegate_pool_connections{state="idle"} ${pool.idle}`, `tablegate_pool_connections{state="waiting"} ${pool.waiting}`);
    const schema = source.schema();
    lines.push('# HELP tablegate_schema_objects Discovered tables and functions.', '# TYPE tablegate_schema_objects gauge');
    lines.push(`tablegate_schema_objects{kind="tables"} ${schema?.tables ?? 0}`, `tablegate_schema_objects{kind="functions"} ${schema?.functions ?? 0}`);
    const gss = source.connection?.();
    lines.push('# HELP tablegate_gss_retries_total GSSAPI token attempts retried (gss_connect_retries).', '# TYPE tablegate_gss_retries_total counter');
    lines.push(`tablegate_gss_retries_total ${gss?.gssRetries ?? 0}`);
    lines.push('# HELP tablegate_gss_failures_total Database connections that failed during GSSAPI authentication.', '# TYPE tablegate_gss_failures_total counter');
    lines.push(`tablegate_gss_failures_total ${gss?.gssFailures ?? 0}`);
    lines.push('# HELP tablegate_gss_circuit_openings_total Times the GSS circuit opened (gss_circuit_threshold).', '# TYPE tablegate_gss_circuit_openings_total counter');
    lines.push(`tablegate_gss_circuit_openings_total ${gss?.gssCircuitOpenings ?? 0}`);
    lines.push('# HELP tablegate_gss_circuit_open 1 while the GSS circuit is open (new connections fail fast), else 0.', '# TYPE tablegate_gss_circuit_open gauge');
    lines.push(`tablegate_gss_circuit_open ${gss?.gssCircuitOpen === true ? 1 : 0}`);
    lines.push('# HELP tablegate_schema_reloads_total Schema discoveries, by what caused them and their result.', '# TYPE tablegate_schema_reloads_total counter');
    for (const [key, n] of this.reloads) {
      const [reason, result] = key.split('\u0000');
      lines.push(`tablegate_schema_reloads_total{reason="${reason}",result="${result}"} ${n}`);
    }
    return `${lines.join('\n')}\n`;
  }
}
