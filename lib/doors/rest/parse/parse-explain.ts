import type { ExplainCommand } from '../../../command/command';
import type { ResolvedConfig } from '../../../pipeline/resolved-config';
import type { Table } from '../../../schema/schema-types';
import type { CursorCodec } from '../../../pipeline/cursor-codec';
import { parseList } from './parse-list';

/**
 * `GET /{table}/_explain?<list params>` -> ExplainCommand: the list command the list route would
 * run for the same parameters (so its plan is the plan of exactly that statement).
 */
export function parseExplain(table: Table, query: readonly (readonly [string, string])[], config: ResolvedConfig, cursors: CursorCodec): ExplainCommand {
  return Object.freeze({ kind: 'explain', table, list: parseList(table, query, config, cursors) });
}
