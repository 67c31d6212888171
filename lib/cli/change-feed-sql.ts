/**
 * The one-time SQL of the change feed (docs/change-feed.md, "Installing"), run by a database
 * owner: a publication of every table of the exposed schemas (`CREATE PUBLICATION ... FOR TABLE`,
 * or `ALTER PUBLICATION ... SET TABLE` when it exists, so running it again after a migration adds
 * the new tables), and REPLICA IDENTITY FULL on the tables that have the tenant column, so that a
 * delete's old row names its tenant. One DO block that reads the catalog when it runs, so the
 * printed script and the applied one are the same text. The gateway's role gets no DDL right;
 * the feed's role needs only the REPLICATION attribute (a superuser grants it: see the notes).
 */

export interface ChangeFeedScriptOptions {
  readonly schemas: readonly string[];
  readonly publication: string;
  readonly tenantColumn: string | undefined;
}

export function changeFeedScript(o: ChangeFeedScriptOptions): string {
  const schemas = `ARRAY[${o.schemas.map(literal).join(', ')}]::text[]`;
  const tenant = o.tenantColumn === undefined ? 'NULL::text' : literal(o.tenantColumn);
  return `-- tablegate change feed (docs/change-feed.md): run as the owner of the tables.
-- Needs wal_level = logical (postgresql.conf, then a restart).
DO $tablegate$
DECLARE
  tables text;
  t record;
BEGIN
  SELECT string_agg(c.oid::regclass::text, ', ' ORDER BY n.nspname, c.relname) INTO tables
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
   WHERE n.nspname = ANY (${schemas}) AND c.relkind IN ('r', 'p') AND NOT c.relispartition;
  IF tables IS NULL THEN
    RAISE EXCEPTION 'no table in the exposed schemas %', ${schemas};
  END IF;
  IF EXISTS (SELECT 1 FROM pg_publication WHERE pubname = ${literal(o.publication)}) THEN
    EXECUTE format('ALTER PUBLICATION %I SET TABLE %s', ${literal(o.publication)}, tables);
  ELSE
    EXECUTE format('CREATE PUBLICATION %I FOR TABLE %s WITH (publish_via_partition_root = true)', ${literal(o.publication)}, tables);
  END IF;
  -- A delete's old row must carry the tenant column: the feed sends it to that tenant only.
  FOR t IN
    SELECT c.oid::regclass AS rel
      FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = ANY (${schemas}) AND c.relkind IN ('r', 'p') AND NOT c.relispartition AND c.relreplident <> 'f'
       AND EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = ${tenant} AND a.attnum > 0 AND NOT a.attisdropped)
  LOOP
    EXECUTE format('ALTER TABLE %s REPLICA IDENTITY FULL', t.rel);
  END LOOP;
END
$tablegate$;
-- The feed's own role (change_feed.database_url) needs the REPLICATION attribute and nothing else;
-- a superuser grants it once:  ALTER ROLE <feed role> REPLICATION;
`;
}

function literal(text: string): string {
  return `'${text.replace(/'/g, "''")}'`;
}
