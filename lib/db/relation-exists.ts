/**
 * relationExists: does the database hold a table, view, materialized view, foreign or partitioned
 * table of this name in one of the exposed schemas? These are exactly the relations discovery
 * lists (schema/introspect.ts), unfiltered by privilege as discovery is, so a yes tells a caller
 * nothing that a schema reload would not show (docs/errors.md, NOT_FOUND).
 * In: the pool, the exposed schemas, a table name from the request path. Out: true or false.
 * Never: the name in the SQL text (it is a bound parameter); a wait of more than a second.
 */
import type pg from 'pg';
import { compileSql, sql } from '../sql/sql';

const lookupTimeoutMs = 1000;

export async function relationExists(pool: pg.Pool, schemas: readonly string[], name: string): Promise<boolean> {
  const { text, values } = compileSql(sql`SELECT 1 FROM pg_catalog.pg_class c
JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
WHERE c.relname = ${name} AND n.nspname = ANY(${[...schemas]}::text[])
  AND n.nspname NOT IN ('pg_catalog', 'information_schema')
  AND c.relkind IN ('r', 'p', 'v', 'm', 'f')
LIMIT 1`);
  const result = await pool.query({ text, values: [...values], query_timeout: lookupTimeoutMs } as pg.QueryConfig);
  return result.rows.length > 0;
}
