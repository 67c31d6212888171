import type { ExplainCommand } from '../../command/command';
import { sql, type Sql } from '../../sql/sql';
import { compileList } from './compile-list';

/**
 * ExplainCommand -> `EXPLAIN (ANALYZE, FORMAT JSON)` of exactly the list statement (same text,
 * same values). ANALYZE runs it, inside the caller's read-only tenant transaction, so the plan
 * shows what RLS makes of it for this tenant.
 */
export function compileExplain(command: ExplainCommand, searchConfig: string | undefined): Sql {
  return sql`EXPLAIN (ANALYZE, FORMAT JSON) ${compileList(command.list, searchConfig)}`;
}
