/**
 * The pure parts of read-replica routing: WAL positions and lag, which replica failures fall back
 * to the primary, the read-your-writes window, the read-primary header, the replica address shown
 * in /health/internal, and the /metrics lines.
 */
import { replicaAddress } from '../../../lib/db/create-replica-pool';
import { RecentWriters } from '../../../lib/db/recent-writers';
import { replicaFault } from '../../../lib/db/replica-fault';
import { lagOf, parseLsn } from '../../../lib/db/replica-lag';
import type { ReplicaStatus } from '../../../lib/db/replica-set';
import { GatewayError } from '../../../lib/errors/gateway-error';
import { readsFromPrimary } from '../../../lib/http/read-primary-header';
import { Registry } from 'prom-client';
import { replicaMetrics } from '../../../lib/ops/replica-metrics';
import { testRequest } from '../auth/request-fixture';

describe('parseLsn', () => {
  it('reads the two hex halves of a pg_lsn', () => {
    expect(parseLsn('0/0')).toBe(0n);
    expect(parseLsn('0/3000148')).toBe(0x3000148n);
    expect(parseLsn('16/B374D848')).toBe((0x16n << 32n) + 0xb374d848n);
    expect(parseLsn('FFFFFFFF/FFFFFFFF')).toBe(2n ** 64n - 1n);
  });

  it('gives null for null and for anything that is not an LSN', () => {
    for (const bad of [null, '', '0', '0/', '/0', '1/2/3', 'G/0', '123456789/0']) expect(parseLsn(bad)).toBeNull();
  });
});

describe('lagOf', () => {
  const standby = (replay: string | null, ageMs: number | null) => ({ inRecovery: true, replayLsn: parseLsn(replay), replayAgeMs: ageMs });

  it('is 0 bytes and 0 ms when the replica replayed everything, however old its last transaction', () => {
    expect(lagOf(parseLsn('0/5000'), standby('0/5000', 3_600_000))).toEqual({ bytes: 0, ms: 0 });
  });

  it('reads a replica that replayed past the primary position asked earlier as caught up, not ahead', () => {
    expect(lagOf(parseLsn('0/5000'), standby('0/6000', 10))).toEqual({ bytes: 0, ms: 0 });
  });

  it('is the WAL distance and the age of the last replayed transaction when behind', () => {
    expect(lagOf(parseLsn('1/0'), standby('0/FFFFF000', 1234.4))).toEqual({ bytes: 4096, ms: 1234 });
    expect(lagOf(parseLsn('0/2000'), standby('0/1000', null))).toEqual({ bytes: 4096, ms: null });
  });

  it('is unknown for a server that is not in recovery, or when a position is missing', () => {
    expect(lagOf(parseLsn('0/2000'), { inRecovery: false, replayLsn: null, replayAgeMs: null })).toEqual({ bytes: null, ms: null });
    expect(lagOf(null, standby('0/1000', 5))).toEqual({ bytes: null, ms: null });
    expect(lagOf(parseLsn('0/2000'), standby(null, 5))).toEqual({ bytes: null, ms: null });
  });
});

describe('replicaFault', () => {
  const pgError = (code: string, message = 'x') => Object.assign(new Error(message), { code });

  it('takes the replica out for connection failures and refusals', () => {
    expect(replicaFault(pgError('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5433'))).toBe('down');
    expect(replicaFault(new Error('Connection terminated unexpectedly'))).toBe('down');
    expect(replicaFault(new Error('timeout exceeded when trying to connect'))).toBe('down');
    expect(replicaFault(new Error('Client has encountered a connection error and is not queryable'))).toBe('down');
    for (const code of ['57P01', '57P02', '57P03', '08006', '53300', '28P01', '3D000', '57P04']) expect([code, replicaFault(pgError(code))]).toEqual([code, 'down']);
    expect(replicaFault(new GatewayError('SERVICE_UNAVAILABLE', 'The database did not answer in time.'))).toBe('down');
  });

  it('retries on the primary but keeps the replica for what only a standby raises', () => {
    for (const code of ['40001', '40P01', '42P01', '42703', '42883', '25006', '55000']) expect([code, replicaFault(pgError(code))]).toEqual([code, 'behind']);
  });

  it('gives the caller its own errors as they are', () => {
    for (const code of ['22P02', '57014', '42501', '23505', 'P0001']) expect([code, replicaFault(pgError(code))]).toEqual([code, undefined]);
    expect(replicaFault(new GatewayError('FORBIDDEN', 'no'))).toBeUndefined();
  });
});

describe('RecentWriters (read_your_writes_ms)', () => {
  it('pins a caller for the window after its write, and only that caller', () => {
    let now = 1000;
    const writers = new RecentWriters(500, () => now);
    writers.wrote('a');
    expect(writers.pinned('a')).toBe(true);
    expect(writers.pinned('b')).toBe(false);
    now = 1499;
    expect(writers.pinned('a')).toBe(true);
    now = 1500;
    expect(writers.pinned('a')).toBe(false);
    expect(writers.size).toBe(0);
  });

  it('restarts the window on each write', () => {
    let now = 0;
    const writers = new RecentWriters(100, () => now);
    writers.wrote('a');
    now = 90;
    writers.wrote('a');
    now = 150;
    expect(writers.pinned('a')).toBe(true);
  });

  it('is off at 0 ms', () => {
    const writers = new RecentWriters(0);
    writers.wrote('a');
    expect(writers.pinned('a')).toBe(false);
    expect(writers.size).toBe(0);
  });

  it('drops expired entries as it goes and never holds more than its cap', () => {
    let now = 0;
    const writers = new RecentWriters(10, () => now, 3);
    for (let i = 0; i < 5; i++) writers.wrote(`c${i}`);
    expect(writers.size).toBe(3);
    expect(writers.pinned('c0')).toBe(false);
    expect(writers.pinned('c4')).toBe(true);
    now = 100;
    writers.wrote('late');
    expect(writers.size).toBe(1);
  });
});

describe('x-gw-read-primary', () => {
  it('is true or false; absent is false', () => {
    expect(readsFromPrimary(testRequest({}))).toBe(false);
    expect(readsFromPrimary(testRequest({ 'x-gw-read-primary': 'true' }))).toBe(true);
    expect(readsFromPrimary(testRequest({ 'x-gw-read-primary': ' TRUE ' }))).toBe(true);
    expect(readsFromPrimary(testRequest({ 'x-gw-read-primary': 'false' }))).toBe(false);
  });

  it('rejects any other value with PARSE_ERROR naming the header', () => {
    for (const value of ['1', 'yes', '', 'true, true']) {
      let error: unknown;
      try {
        readsFromPrimary(testRequest({ 'x-gw-read-primary': value }));
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(GatewayError);
      expect((error as GatewayError).code).toBe('PARSE_ERROR');
      expect((error as GatewayError).details).toEqual({ header: 'x-gw-read-primary' });
    }
  });
});

describe('replicaAddress', () => {
  it('shows host and port, never the user or password', () => {
    expect(replicaAddress('postgres://u:secret@replica-1:6432/app')).toEqual({ host: 'replica-1', port: 6432 });
    expect(replicaAddress('postgresql://u@10.0.0.5/app')).toEqual({ host: '10.0.0.5', port: 5432 });
    expect(replicaAddress('postgres://u@[::1]:5433/app')).toEqual({ host: '::1', port: 5433 });
    expect(replicaAddress('postgres:///app?host=/var/run/postgresql&port=5434')).toEqual({ host: '/var/run/postgresql', port: 5434 });
  });
});

describe('replicaMetrics', () => {
  const status = (over: Partial<ReplicaStatus>): ReplicaStatus => ({
    host: '127.0.0.1', port: 5433, state: 'healthy', reason: null, lag_bytes: 0, lag_ms: 0, in_use: 2,
    retry_in_s: null, reads: 7, fallbacks: 1, last_error: null, ...over,
  });
  /** name -> the series' labels and values, read through prom-client's own JSON form. */
  async function scrape(replicas: readonly ReplicaStatus[] | undefined) {
    const registry = new Registry();
    for (const metric of replicaMetrics('tablegate_', () => replicas)) registry.registerMetric(metric);
    const json = await registry.getMetricsAsJSON();
    return { json, values: (name: string) => json.find((m) => m.name === name)?.values.map((v) => ({ labels: v.labels, value: v.value })) };
  }

  it('has no series without replicas', async () => {
    const { json } = await scrape(undefined);
    expect(json.every((m) => m.values.length === 0)).toBe(true);
    expect((await scrape([])).json.every((m) => m.values.length === 0)).toBe(true);
  });

  it('has one series per replica, labelled by position and configured address; unknown lag is left out', async () => {
    const { json, values } = await scrape([status({}), status({ host: '::1', port: 5434, state: 'out', reason: 'unreachable', lag_bytes: null, lag_ms: null, in_use: 0 })]);
    const first = { replica: '0', address: '127.0.0.1:5433' };
    const second = { replica: '1', address: '[::1]:5434' };
    expect(values('tablegate_replica_up')).toEqual([{ labels: first, value: 1 }, { labels: second, value: 0 }]);
    expect(values('tablegate_replica_lag_bytes')).toEqual([{ labels: first, value: 0 }]);
    expect(values('tablegate_replica_lag_seconds')).toEqual([{ labels: first, value: 0 }]);
    expect(values('tablegate_replica_connections_in_use')).toEqual([{ labels: first, value: 2 }, { labels: second, value: 0 }]);
    expect(values('tablegate_replica_reads_total')).toEqual([{ labels: first, value: 7 }, { labels: second, value: 7 }]);
    expect(values('tablegate_replica_fallbacks_total')).toEqual([{ labels: first, value: 1 }, { labels: second, value: 1 }]);
    expect(json.find((m) => m.name === 'tablegate_replica_reads_total')?.type).toBe('counter');
  });

  it('follows the replicas from one scrape to the next (a counter is the total kept by the replica set)', async () => {
    let reads = 3;
    const registry = new Registry();
    for (const metric of replicaMetrics('tablegate_', () => [status({ reads })])) registry.registerMetric(metric);
    const readsNow = async () => (await registry.getMetricsAsJSON()).find((m) => m.name === 'tablegate_replica_reads_total')?.values[0]?.value;
    expect(await readsNow()).toBe(3);
    reads = 10;
    expect(await readsNow()).toBe(10);
  });
});
