/**
 * A cheap fingerprint of the catalog rows that schema discovery reads, for the polling fallback
 * of schema reload (`schema_poll_s`, docs/scaling-out.md).
 *
 * In: a queryable and the exposed schema names. Out: one short text that changes whenever a row
 * of pg_namespace, pg_class, pg_attribute, pg_constraint or pg_proc that belongs to those schemas
 * is added, removed or rewritten. It never reads table data and never builds the schema cache.
 *
 * Why count(*) and sum(xmin) are enough: every DDL statement writes new versions of the catalog
 * rows it changes (CREATE, ALTER, RENAME, GRANT, DROP COLUMN, ENABLE ROW LEVEL SECURITY...), and a
 * new row version carries the id of the transaction that wrote it (the `xmin` system column,
 * PostgreSQL manual §5.6 "System Columns"). Between two polls, a change either alters the number
 * of rows or replaces some rows by rows written later, whose xmin values are larger, so the sum
 * grows. VACUUM, ANALYZE and freezing update pg_class in place and keep xmin, so they do not count
 * as changes. Only an exact cancellation after transaction-id wraparound could hide a change; a
 * LISTEN notification (the default) or the next change would still reload.
 */
import type { Queryable } from './introspect';

// Relation kinds as in introspect.ts, plus 'c' (composite types that functions may return).
// Indexes and sequences are left out: they are not in the schema cache, and leaving out their
// columns keeps the pg_attribute part small.
const FINGERPRINT_SQL = `
WITH ns AS (
  SELECT oid FROM pg_catalog.pg_namespace
  WHERE nspname = ANY($1::text[]) AND nspname NOT IN ('pg_catalog', 'information_schema')
), rel AS (
  SELECT c.oid, c.xmin FROM pg_catalog.pg_class c
  WHERE c.relnamespace IN (SELECT oid FROM ns) AND c.relkind IN ('r', 'p', 'v', 'm', 'f', 'c')
)
SELECT count(*)::text || '/' || coalesce(sum(x::text::int8), 0)::text AS fingerprint
FROM (
  SELECT n.xmin AS x FROM pg_catalog.pg_namespace n WHERE n.oid IN (SELECT oid FROM ns)
  UNION ALL SELECT rel.xmin FROM rel
  UNION ALL SELECT a.xmin FROM pg_catalog.pg_attribute a WHERE a.attrelid IN (SELECT oid FROM rel) AND a.attnum > 0
  UNION ALL SELECT k.xmin FROM pg_catalog.pg_constraint k WHERE k.connamespace IN (SELECT oid FROM ns)
  UNION ALL SELECT p.xmin FROM pg_catalog.pg_proc p WHERE p.pronamespace IN (SELECT oid FROM ns)
) AS rows_of_exposed_schemas`;

export async function schemaFingerprint(db: Queryable, schemas: readonly string[]): Promise<string> {
  const { rows } = await db.query(FINGERPRINT_SQL, [[...schemas]]);
  return String(rows[0]?.fingerprint ?? '');
}
