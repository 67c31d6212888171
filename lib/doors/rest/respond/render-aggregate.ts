/**
 * Aggregate and explain (a list's plan) results -> HTTP (docs/querying.md). Both bodies are JSON text from
 * PostgreSQL, in the column the plan's shape names; they are spliced in, never parsed.
 */
import type { ReadCommand } from '../../../command/command';
import type { ValueShape } from '../../../pipeline/plan';
import type { Result } from '../../../pipeline/result';
import type { Rendered } from './rendered';

/** `{"data":{"fn":"sum","column":"price","value":123.5}}`: one row, one json_build_object column. */
export function renderAggregate(_command: ReadCommand, shape: ValueShape, result: Result): Rendered {
  const value = result.rows[0]?.[shape.value];
  if (value === undefined || value === null) throw new Error('the aggregate statement returned no row');
  return { status: 200, body: `{"data":${value}}` };
}

/** `{"data":{"plan":[...]}}`: EXPLAIN (FORMAT JSON) returns the plan array as one text value. */
export function renderExplain(_command: ReadCommand, shape: ValueShape, result: Result): Rendered {
  const plan = result.rows[0]?.[shape.value];
  if (plan === undefined || plan === null) throw new Error('EXPLAIN returned no plan');
  return { status: 200, body: `{"data":{"plan":${plan}}}` };
}
