/**
 * withEstimate: the total of `count=planned|estimated` as PostgREST decides it (docs/postgrest-dialect.md,
 * "Counts"): planned is the planner's number as it is; estimated is the exact count up to the
 * cap (max_limit), above it the larger of the count and the estimate.
 */
import type { Plan } from '../../../lib/pipeline/plan';
import type { Result } from '../../../lib/pipeline/result';
import { withEstimate } from '../../../lib/stages/execute/with-estimate';

const explain = (rows: number): string => JSON.stringify([{ Plan: { 'Node Type': 'Seq Scan', 'Plan Rows': rows } }]);
const plan = (mode: 'planned' | 'estimated', cap = 1000): Plan =>
  ({ query: { text: 'SELECT 1', values: [] }, readOnly: true, shape: { kind: 'read', body: 0, count: 1, total: 2 }, estimate: { query: { text: 'EXPLAIN', values: [] }, mode, cap } }) as unknown as Plan;
/** A page of `page` rows whose statement counted `counted` (estimated) or nothing (planned). */
const result = (page: number, counted: number | null, planned: number): Result => ({ rows: [['[]', String(page), counted === null ? null : String(counted)]], estimate: explain(planned) });
const totalOf = (r: Result): string | null => r.rows[0]![2]!;

describe('withEstimate', () => {
  it('planned: the estimate as it is, even below the rows of the page', () => {
    expect(totalOf(withEstimate(result(40, null, 22), plan('planned')))).toBe('22');
    expect(totalOf(withEstimate(result(5, null, 900), plan('planned')))).toBe('900');
  });

  it('estimated: the exact count up to the cap, whatever the planner says', () => {
    expect(totalOf(withEstimate(result(5, 52, 22), plan('estimated', 1000)))).toBe('52');
  });

  it('estimated: above the cap, the larger of the count and the estimate', () => {
    expect(totalOf(withEstimate(result(5, 101, 5000), plan('estimated', 100)))).toBe('5000');
    expect(totalOf(withEstimate(result(5, 101, 50), plan('estimated', 100)))).toBe('101');
  });

  it('planned without an EXPLAIN answer: no total', () => {
    const r: Result = { rows: [['[]', '3', null]] };
    expect(totalOf(withEstimate(r, plan('planned')))).toBeNull();
  });
});
