/**
 * The read replicas' part of GET /metrics (Prometheus text format), kept apart from metrics.ts so
 * that it moves as one piece. Labels: `replica` is the position in read_replica_urls and `address`
 * its host:port from the configuration, so there are as many series as configured replicas, never
 * more; no request data and never a user name or password.
 */
import type { ReplicaStatus } from '../db/replica-set';

export function renderReplicaMetrics(replicas: readonly ReplicaStatus[] | undefined): string {
  if (!replicas || replicas.length === 0) return '';
  const labels = replicas.map((r, i) => `replica="${i}",address="${escapeLabel(r.host.includes(':') ? `[${r.host}]:${r.port}` : `${r.host}:${r.port}`)}"`);
  const lines: string[] = [];
  const family = (name: string, type: 'gauge' | 'counter', help: string, value: (r: ReplicaStatus) => number | null): void => {
    lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
    replicas.forEach((r, i) => {
      const v = value(r);
      // An unknown lag is left out rather than reported as 0 (which would read as "caught up").
      if (v !== null) lines.push(`${name}{${labels[i]}} ${v}`);
    });
  };
  family('tablegate_replica_up', 'gauge', '1 while the read replica is in rotation, 0 while it is out.', (r) => (r.state === 'healthy' ? 1 : 0));
  family('tablegate_replica_lag_bytes', 'gauge', 'WAL bytes the replica has not replayed yet, at the last check.', (r) => r.lag_bytes);
  family('tablegate_replica_lag_seconds', 'gauge', 'How far the replica is behind the primary, at the last check.', (r) => (r.lag_ms === null ? null : r.lag_ms / 1000));
  family('tablegate_replica_connections_in_use', 'gauge', 'Connections of the replica pool checked out now.', (r) => r.in_use);
  family('tablegate_replica_reads_total', 'counter', 'Reads the replica answered.', (r) => r.reads);
  family('tablegate_replica_fallbacks_total', 'counter', 'Reads that failed on the replica and were answered by the primary.', (r) => r.fallbacks);
  return `${lines.join('\n')}\n`;
}

function escapeLabel(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}
