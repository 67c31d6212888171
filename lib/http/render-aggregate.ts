/** Aggregate and explain results -> HTTP (contract §3). Both bodies are JSON text from PostgreSQL. */
import type { AggregateCommand, ExplainCommand } from '../command/command';
import type { Result } from '../stages/stage-types';
import type { Rendered } from './render-result';

/** `{"data":{"fn":"sum","column":"price","value":123.5}}`: one row, one json_build_object column. */
export function renderAggregate(_command: AggregateCommand, result: Result): Rendered {
  const value = result.rows[0]?.[0];
  if (value === undefined || value === null) throw new Error('the aggregate statement returned no row');
  return { status: 200, body: `{"data":${value}}` };
}

/** `{"data":{"plan":[...]}}`: EXPLAIN (FORMAT JSON) returns the plan array as one text value. */
export function renderExplain(_command: ExplainCommand, result: Result): Rendered {
  const plan = result.rows[0]?.[0];
  if (plan === undefined || plan === null) throw new Error('EXPLAIN returned no plan');
  return { status: 200, body: `{"data":{"plan":${plan}}}` };
}
