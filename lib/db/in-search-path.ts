/**
 * A Queryable for schema discovery whose every query runs in its own read-only transaction under
 * the search_path that requests run with (search-path.ts).
 *
 * Why: discovery keeps type names as format_type() prints them, and compile writes them into
 * statements (casts, column definition lists). format_type() leaves a name unqualified only when
 * the session's search_path finds that very type (PostgreSQL manual, "System Information
 * Functions"). Read under another search_path, `mood` printed for public.mood could name api.mood
 * in a request whose search_path puts `api` first. In: the pool and the search_path value. Out:
 * the query's result. Never: a session-level setting; set_config(..., true) ends with the
 * transaction, and the queries still run side by side, one connection each.
 */
import type pg from 'pg';
import type { Queryable } from '../schema/introspect';

export function inSearchPath(pool: pg.Pool, searchPath: string): Queryable {
  return {
    async query(text: string, values?: unknown[]) {
      const client = await pool.connect();
      let broken: Error | undefined;
      // A backend killed between two of these statements makes the checked-out client emit
      // 'error', which pg-pool does not listen for while it is checked out: kept here, the
      // statement that follows fails with it instead of the process getting an unhandled error.
      const onError = (err: Error): void => void (broken ??= err);
      client.on('error', onError);
      try {
        await client.query('BEGIN READ ONLY');
        await client.query("SELECT set_config('search_path', $1, true)", [searchPath]);
        const result = await client.query(text, values);
        await client.query('COMMIT');
        return result;
      } catch (err) {
        // Discovery is not on the request path: a connection that failed mid-transaction is dropped.
        broken = err as Error;
        throw err;
      } finally {
        client.off('error', onError);
        client.release(broken);
      }
    },
  };
}
