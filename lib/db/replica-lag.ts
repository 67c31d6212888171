/**
 * How far a streaming replica is behind its primary, in WAL bytes and in ms.
 * In: the primary's and the replica's pools. Out: positions and lag, or a rejection when a server
 * cannot be asked (the caller decides what that means). Never: takes a lock or writes.
 *
 * Bytes: the primary's current WAL position (pg_current_wal_lsn(); on a cascading standby its own
 * replay position) minus the replica's replay position (pg_last_wal_replay_lsn()), asked in that
 * order, so a replica that replayed in between reads as 0, not negative. PostgreSQL docs §28.4
 * (Monitoring) and §9.27.4 (Recovery Information Functions).
 *
 * Time: 0 when the replica has replayed everything; otherwise the age of the last transaction it
 * replayed (now() - pg_last_xact_replay_timestamp()). That timestamp is the commit time on the
 * primary, so after a long idle spell on the primary the first new write makes the lag read as
 * the whole idle time until it is replayed: an upper bound, documented in docs/scaling-out.md.
 */
import type pg from 'pg';

/** A probe that does not answer in this time counts as failed (a frozen server never answers). */
export const lagProbeTimeoutMs = 5000;

export interface ReplicaPosition {
  /** False for a server that is not a standby (promoted, or a logical replica): no lag to measure. */
  readonly inRecovery: boolean;
  readonly replayLsn: bigint | null;
  /** ms since the commit of the last transaction the replica replayed; null before the first. */
  readonly replayAgeMs: number | null;
}

export interface Lag {
  readonly bytes: number | null;
  readonly ms: number | null;
}

export async function primaryPosition(pool: pg.Pool): Promise<bigint | null> {
  const { rows } = await pool.query<{ lsn: string | null }>({
    text: 'SELECT (CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn() ELSE pg_current_wal_lsn() END)::text AS lsn',
    query_timeout: lagProbeTimeoutMs,
  } as pg.QueryConfig);
  return parseLsn(rows[0]?.lsn ?? null);
}

export async function replicaPosition(pool: pg.Pool): Promise<ReplicaPosition> {
  const { rows } = await pool.query<{ in_recovery: boolean; replay_lsn: string | null; replay_age_ms: number | null }>({
    text:
      'SELECT pg_is_in_recovery() AS in_recovery, pg_last_wal_replay_lsn()::text AS replay_lsn, ' +
      '(extract(epoch FROM clock_timestamp() - pg_last_xact_replay_timestamp()) * 1000)::float8 AS replay_age_ms',
    query_timeout: lagProbeTimeoutMs,
  } as pg.QueryConfig);
  const row = rows[0];
  return {
    inRecovery: row?.in_recovery === true,
    replayLsn: parseLsn(row?.replay_lsn ?? null),
    replayAgeMs: typeof row?.replay_age_ms === 'number' ? row.replay_age_ms : null,
  };
}

/** Lag of `replica` behind a primary at `primaryLsn`; unknown (null) where it cannot be told. */
export function lagOf(primaryLsn: bigint | null, replica: ReplicaPosition): Lag {
  if (!replica.inRecovery || primaryLsn === null || replica.replayLsn === null) return { bytes: null, ms: null };
  const behind = primaryLsn > replica.replayLsn ? primaryLsn - replica.replayLsn : 0n;
  if (behind === 0n) return { bytes: 0, ms: 0 };
  const ms = replica.replayAgeMs === null ? null : Math.max(0, Math.round(replica.replayAgeMs));
  return { bytes: Number(behind), ms };
}

/** `16/B374D848` (pg_lsn text: two 32-bit hex halves) -> its byte position. */
export function parseLsn(text: string | null): bigint | null {
  if (text === null) return null;
  const match = /^([0-9A-Fa-f]{1,8})\/([0-9A-Fa-f]{1,8})$/.exec(text);
  if (!match) return null;
  return (BigInt(`0x${match[1]}`) << 32n) + BigInt(`0x${match[2]}`);
}
