/**
 * What one request's pipeline measured about itself: time in the auth stage, time in the
 * Database port, and why auth failed. It travels on the request's context (never in a global),
 * so concurrent requests cannot mix; the gateway turns it into the metrics and the
 * `Server-Timing` header (docs/architecture.md, "Metrics").
 * In: the request's Database. Out: the same Database, timed. Never: changes what it runs.
 */
import type { AuthFailureReason } from './auth-failure-reasons';
import type { Database } from './database';

export interface RequestMeasures {
  /** Milliseconds in the auth stage. */
  authMs: number;
  /** Milliseconds in the Database port (waiting for a pool connection included). */
  dbMs: number;
  /** Calls of the Database port; 0 when the request never reached the database. */
  dbCalls: number;
  /** Set when the auth stage threw. */
  authFailure?: AuthFailureReason;
}

export function newRequestMeasures(): RequestMeasures {
  return { authMs: 0, dbMs: 0, dbCalls: 0 };
}

/** `db` with every call's duration added to `measures.dbMs`, failures included. */
export function measuredDatabase(db: Database, measures: RequestMeasures): Database {
  const timed = async <T>(call: () => Promise<T>): Promise<T> => {
    const started = performance.now();
    measures.dbCalls++;
    try {
      return await call();
    } finally {
      measures.dbMs += performance.now() - started;
    }
  };
  return {
    run: (identity, plan) => timed(() => db.run(identity, plan)),
    locateFailingRow: (identity, probe, isRowError) => timed(() => db.locateFailingRow(identity, probe, isRowError)),
    // An export's time counts until its first batch is read; the rest is spent writing the body.
    ...(db.stream ? { stream: (identity, plan) => timed(() => db.stream!(identity, plan)) } : {}),
    // A batch's transaction counts as one call, from checkout to COMMIT.
    ...(db.transaction ? { transaction: (identity, options, work) => timed(() => db.transaction!(identity, options, work)) } : {}),
  };
}
