/**
 * The execute stage's view of PostgreSQL: run one plan as one caller, in one transaction.
 */
import type { Identity } from '../auth/identity';
import type { Plan, Result } from '../stage-types';

export interface Database {
  /** Runs the plan in one transaction that first sets the caller's tenant context. */
  run(identity: Identity, plan: Plan): Promise<Result>;
}
