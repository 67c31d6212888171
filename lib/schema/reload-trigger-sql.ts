/**
 * The DDL event trigger that announces schema changes to every gateway (docs/scaling-out.md,
 * "Schema reload on DDL"), as installed by `tablegate install-reload-trigger` and printed in the
 * docs.
 *
 * In: the channel (`reload_channel`) and the schema that holds the trigger function. Out: the
 * statements, in order; run in one transaction they replace any earlier installation, so running
 * them twice is harmless. Never: takes text that is not a checked name (DDL has no bound
 * parameters, so names go through `ident()` and the channel must be a plain lower-case name,
 * which also keeps it clear of the `$tablegate$` quote of the function body).
 *
 * What fires (PostgreSQL manual, "Event Trigger Firing Matrix"): `ddl_command_end` after every
 * CREATE, ALTER, GRANT/REVOKE on objects, COMMENT, SECURITY LABEL and CREATE/ALTER POLICY;
 * `sql_drop` for every DROP (including ALTER TABLE ... DROP COLUMN). Changes to temporary objects
 * are skipped: they can never be in the schema cache. NOTIFY is sent at commit, once per
 * transaction however many statements it ran.
 */
import { compileSql, ident, sql } from '../sql/sql';
import type { Sql } from '../sql/sql';

/** The names the installation uses; fixed, so that installing again replaces the old one. */
export const RELOAD_FUNCTION = 'tablegate_reload_notify';
export const RELOAD_TRIGGERS = { ddl: 'tablegate_reload_ddl', drop: 'tablegate_reload_drop' } as const;

const CHANNEL = /^[a-z_][a-z0-9_]{0,62}$/;

export function reloadTriggerStatements(channel: string, functionSchema = 'public'): readonly string[] {
  if (!CHANNEL.test(channel)) throw new TypeError(`not a reload channel name: ${JSON.stringify(channel.slice(0, 64))}`);
  const fn = ident(functionSchema, RELOAD_FUNCTION);
  const notify = sql`NOTIFY ${ident(channel)}`;
  const statements: Sql[] = [
    sql`CREATE OR REPLACE FUNCTION ${fn}() RETURNS event_trigger
LANGUAGE plpgsql AS $tablegate$
BEGIN
  IF TG_EVENT = 'sql_drop' THEN
    IF EXISTS (SELECT FROM pg_catalog.pg_event_trigger_dropped_objects() WHERE NOT is_temporary) THEN
      ${notify};
    END IF;
  -- A DROP reports its objects to sql_drop only.
  ELSIF TG_TAG NOT LIKE 'DROP %'
    AND (NOT EXISTS (SELECT FROM pg_catalog.pg_event_trigger_ddl_commands())
         OR EXISTS (SELECT FROM pg_catalog.pg_event_trigger_ddl_commands() WHERE schema_name IS DISTINCT FROM 'pg_temp')) THEN
    ${notify};
  END IF;
END
$tablegate$`,
    sql`DROP EVENT TRIGGER IF EXISTS ${ident(RELOAD_TRIGGERS.ddl)}`,
    sql`CREATE EVENT TRIGGER ${ident(RELOAD_TRIGGERS.ddl)} ON ddl_command_end EXECUTE FUNCTION ${fn}()`,
    sql`DROP EVENT TRIGGER IF EXISTS ${ident(RELOAD_TRIGGERS.drop)}`,
    sql`CREATE EVENT TRIGGER ${ident(RELOAD_TRIGGERS.drop)} ON sql_drop EXECUTE FUNCTION ${fn}()`,
  ];
  return statements.map((statement) => {
    const { text, values } = compileSql(statement);
    // DDL cannot take parameters: every hole above must be a fragment, never a value.
    if (values.length > 0) throw new TypeError('reload trigger DDL must not carry bound values');
    return text;
  });
}

/** The statements as one script, as `--print` shows it and docs/scaling-out.md quotes it. */
export function reloadTriggerScript(channel: string, functionSchema = 'public'): string {
  return ['BEGIN;', ...reloadTriggerStatements(channel, functionSchema).map((s) => `${s};`), 'COMMIT;', ''].join('\n');
}
