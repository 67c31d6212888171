/**
 * The Database port: the execute stage's view of PostgreSQL. Run one plan as one caller, in one
 * transaction. lib/db/create-database.ts implements it; stages see only this interface.
 */
import type { CompiledQuery } from '../sql/sql';
import type { Identity } from './identity';
import type { Plan, RowProbe } from './plan';
import type { Result } from './result';
import type { RowStream } from './row-stream';

export interface FailingRow {
  /** Zero-based index of the first row that fails. */
  readonly index: number;
  /** PostgreSQL's error for the prefix ending at that row. */
  readonly error: unknown;
}

/**
 * The transaction-local `request.*` settings a door may give its callers' SQL (request.jwt.claims,
 * request.method, request.path, request.headers: docs/architecture.md, "Doors"): JSON texts and
 * the method and path.
 */
export interface RequestSettings {
  readonly claims: string;
  readonly method: string;
  readonly path: string;
  readonly headers: string;
  /** The request's TimeZone (a name the door checked), in force for its transaction; absent: the session's. */
  readonly timeZone?: string;
}

/** A plan with a statement to run, and the door's `request.*` settings when it gives any (execute adds them). */
export type QueryPlan = Plan & { readonly query: CompiledQuery; readonly request?: RequestSettings };

export interface Database {
  /** Runs the plan in one transaction that first sets the caller's tenant context. */
  run(identity: Identity, plan: QueryPlan): Promise<Result>;
  /**
   * An export (a plan with a `stream` shape): opens a cursor over the plan's statement in one
   * READ ONLY transaction with the caller's tenant context, under `export_statement_timeout_ms`,
   * and reads the first batch before it resolves, so that an error there is an ordinary error
   * response. The stream holds the connection until it ends or is closed. Absent on a Database
   * that cannot stream (a host's own): exports then fail with INTERNAL_ERROR, never a page.
   */
  stream?(identity: Identity, plan: QueryPlan): Promise<RowStream>;
  /**
   * After `run` failed on a batch: which row fails, probed as the same caller in a transaction
   * that is rolled back. Undefined when it cannot tell.
   */
  locateFailingRow(identity: Identity, probe: RowProbe, isRowError: (err: unknown) => boolean): Promise<FailingRow | undefined>;
  /**
   * Several plans in ONE transaction as one caller (a batch, docs/writing.md#batches): the
   * transaction sets the caller's tenant context, `work` runs plans through the Database it is
   * given (each plan's statement in that transaction, in order), and the transaction commits when
   * `work` resolves and is rolled back when it throws, so nothing of a failed batch is written.
   * `readOnly`: a READ ONLY transaction. `statements`: how many plans at most, which bounds the
   * whole transaction's time. Absent on a Database that cannot (a host's own): batches are refused.
   */
  transaction?<T>(identity: Identity, options: TransactionOptions, work: (db: Database) => Promise<T>): Promise<T>;
}

export interface TransactionOptions {
  readonly readOnly: boolean;
  readonly statements: number;
}
