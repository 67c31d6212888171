/**
 * The execute stage's view of PostgreSQL: run one plan as one caller, in one transaction.
 */
import type { FailingRow, RowProbe } from '../../db/locate-failing-row';
import type { Identity } from '../auth/identity';
import type { CompiledQuery } from '../../sql/sql';
import type { Plan, Result } from '../stage-types';

/** A plan with a statement to run. */
export type QueryPlan = Plan & { readonly query: CompiledQuery };

export interface Database {
  /** Runs the plan in one transaction that first sets the caller's tenant context. */
  run(identity: Identity, plan: QueryPlan): Promise<Result>;
  /**
   * After `run` failed on a batch: which row fails, probed as the same caller in a transaction
   * that is rolled back. Undefined when it cannot tell.
   */
  locateFailingRow(identity: Identity, probe: RowProbe, isRowError: (err: unknown) => boolean): Promise<FailingRow | undefined>;
}
