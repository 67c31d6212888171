/**
 * A read answered with its plan (`media: 'plan'`, e.g. `Accept: application/vnd.pgrst.plan+json`): EXPLAIN of
 * exactly the statement the read would run, same text and values (docs/postgrest-dialect.md,
 * "Plans"). In: the options parse took from the media type's `options=` and the statement.
 * Out: `EXPLAIN (<options>) <statement>`. Never: writes an option that is not one of the fixed
 * words below. ANALYZE runs the statement inside the caller's read-only tenant transaction.
 */
import type { PlanOptions } from '../../command/command';
import { join, sql, type Sql } from '../../sql/sql';

export function compilePlan(options: PlanOptions, statement: Sql): Sql {
  const words: Sql[] = [];
  if (options.analyze) words.push(sql`ANALYZE`);
  if (options.verbose) words.push(sql`VERBOSE`);
  if (options.settings) words.push(sql`SETTINGS`);
  if (options.buffers) words.push(sql`BUFFERS`);
  if (options.wal) words.push(sql`WAL`);
  words.push(options.format === 'json' ? sql`FORMAT JSON` : sql`FORMAT TEXT`);
  return sql`EXPLAIN (${join(words)}) ${statement}`;
}
