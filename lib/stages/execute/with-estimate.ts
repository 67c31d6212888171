/**
 * `Prefer: count=planned|estimated` (a read's `count`): the total from the planner's
 * estimate of the caller's own statement (docs/security.md, "Counts and estimates").
 * In: the read's result and the EXPLAIN (FORMAT JSON) text the Database ran just before it, in the
 * caller's transaction. Out: the result with its `total` column filled in.
 * Never: reads the table's statistics directly (pg_class.reltuples counts every tenant's rows).
 */
import type { Plan } from '../../pipeline/plan';
import type { Result } from '../../pipeline/result';

export function withEstimate(result: Result, plan: Plan): Result {
  const { estimate } = plan;
  const row = result.rows[0];
  if (!estimate || plan.shape.kind !== 'read' || !row) return result;
  const at = plan.shape.total;
  const planned = plannedRows(result.estimate);
  // docs/postgrest-dialect.md, "Counts": `planned` is the planner's number as it is,
  // even below the rows of the page; `estimated` is the exact count up to the cap (max_limit,
  // the page cap of every read), and above it the larger of the count and the estimate.
  let total: number | null;
  if (estimate.mode === 'planned') total = planned;
  else {
    const counted = Number(row[at]);
    total = counted <= estimate.cap || planned === null ? counted : Math.max(planned, counted);
  }
  const rows = [Object.freeze(row.map((v, i) => (i === at ? (total === null ? null : String(total)) : v))), ...result.rows.slice(1)];
  return Object.freeze({ ...result, rows: Object.freeze(rows) });
}

/** The top plan node's `Plan Rows`, or null when there is none (a Database that did not run it). */
function plannedRows(explain: string | undefined): number | null {
  if (explain === undefined) return null;
  const parsed = JSON.parse(explain) as { Plan?: { 'Plan Rows'?: unknown } }[];
  const rows = parsed[0]?.Plan?.['Plan Rows'];
  return typeof rows === 'number' && Number.isFinite(rows) ? Math.max(0, Math.round(rows)) : null;
}
