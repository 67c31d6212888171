/**
 * The read replicas' series of GET /metrics (prom-client metrics read at scrape time), kept apart
 * from metrics.ts so that they move as one piece. Labels: `replica` is the position in
 * read_replica_urls and `address` its host:port from the configuration, so there are as many
 * series as configured replicas, never more; no request data and never a user name or password.
 */
import { Counter, Gauge } from 'prom-client';
import type { ReplicaStatus } from '../db/replica-set';

type Labels = 'replica' | 'address';

export function replicaMetrics(prefix: string, replicas: () => readonly ReplicaStatus[] | undefined): (Gauge<Labels> | Counter<Labels>)[] {
  const labelNames = ['replica', 'address'] as const;
  const labelsOf = (r: ReplicaStatus, i: number) => ({ replica: String(i), address: r.host.includes(':') ? `[${r.host}]:${r.port}` : `${r.host}:${r.port}` });
  const gauge = (name: string, help: string, value: (r: ReplicaStatus) => number | null) =>
    new Gauge({
      name: `${prefix}${name}`, help, labelNames, registers: [],
      collect() {
        this.reset();
        // An unknown lag is left out rather than reported as 0 (which would read as "caught up").
        (replicas() ?? []).forEach((r, i) => {
          const v = value(r);
          if (v !== null) this.set(labelsOf(r, i), v);
        });
      },
    });
  const counter = (name: string, help: string, value: (r: ReplicaStatus) => number) =>
    new Counter({
      name: `${prefix}${name}`, help, labelNames, registers: [],
      collect() {
        this.reset();
        (replicas() ?? []).forEach((r, i) => this.inc(labelsOf(r, i), value(r)));
      },
    });
  return [
    gauge('replica_up', '1 while the read replica is in rotation, 0 while it is out.', (r) => (r.state === 'healthy' ? 1 : 0)),
    gauge('replica_lag_bytes', 'WAL bytes the replica has not replayed yet, at the last check.', (r) => r.lag_bytes),
    gauge('replica_lag_seconds', 'How far the replica is behind the primary, at the last check.', (r) => (r.lag_ms === null ? null : r.lag_ms / 1000)),
    gauge('replica_connections_in_use', 'Connections of the replica pool checked out now.', (r) => r.in_use),
    counter('replica_reads_total', 'Reads the replica answered.', (r) => r.reads),
    counter('replica_fallbacks_total', 'Reads that failed on the replica and were answered by the primary.', (r) => r.fallbacks),
  ];
}
