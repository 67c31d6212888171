import type { PlanOptions, ReadCommand } from '../../../command/command';
import type { ResolvedConfig } from '../../../pipeline/resolved-config';
import type { Table } from '../../../schema/schema-types';
import type { CursorCodec } from '../../../pipeline/cursor-codec';
import { parseList } from './parse-list';

/** EXPLAIN (ANALYZE, FORMAT JSON): ANALYZE runs the statement in the caller's read-only tenant transaction. */
const explainPlan: PlanOptions = Object.freeze({ analyze: true, verbose: false, settings: false, buffers: false, wal: false, format: 'json' });

/**
 * `GET /{table}/_explain?<list params>` -> the list command the list route would run for the same
 * parameters, answered with its plan (the `plan` capability), so the plan is the plan of exactly
 * that statement.
 */
export function parseExplain(table: Table, query: readonly (readonly [string, string])[], config: ResolvedConfig, cursors: CursorCodec): ReadCommand {
  return Object.freeze({ ...parseList(table, query, config, cursors), plan: explainPlan });
}
