/**
 * `tablegate install-reload-trigger`: installs the DDL event trigger whose notifications make
 * every gateway reload its schema (docs/scaling-out.md, "Schema reload on DDL").
 *
 * In: `--database-url` (a role allowed to create event triggers: a superuser) or the
 * `database_url` of `--config`; the channel from the config's `reload_channel` (default
 * `tablegate_reload`); `--schema` for the trigger function (default `public`); `--print` to show
 * the SQL without connecting. Out: the statements run in one transaction (idempotent: the function
 * is replaced and the triggers recreated), a summary on stdout, exit 0; or one error line on
 * stderr and exit 1. Never: prints a URL or password (pg's messages carry neither).
 */
import pg from 'pg';
import { resolveConfig } from '../config/resolve-config';
import { RELOAD_FUNCTION, RELOAD_TRIGGERS, reloadTriggerScript, reloadTriggerStatements } from '../schema/reload-trigger-sql';
import { messageOf } from './serve';

export interface InstallReloadTriggerOptions {
  readonly configFile?: string | undefined;
  readonly databaseUrl?: string | undefined;
  readonly schema?: string | undefined;
  readonly print?: boolean;
}

export async function installReloadTrigger(opts: InstallReloadTriggerOptions): Promise<number> {
  let channel = 'tablegate_reload';
  let url = opts.databaseUrl;
  const schema = opts.schema ?? 'public';
  try {
    if (opts.configFile !== undefined) {
      const config = resolveConfig({ configFile: opts.configFile, ...(url === undefined ? {} : { databaseUrl: url }) });
      channel = config.reloadChannel;
      url ??= config.databaseUrl;
    }
  } catch (err) {
    return fail(messageOf(err));
  }
  if (opts.print === true) {
    process.stdout.write(reloadTriggerScript(channel, schema));
    return 0;
  }
  if (url === undefined) return fail('install-reload-trigger needs --database-url <url> or --config <gw.toml> with a database_url');

  const client = new pg.Client({ connectionString: url, application_name: 'tablegate-install' });
  client.on('error', () => undefined); // a lost connection surfaces as the failing query's error
  try {
    await client.connect();
    const { rows } = await client.query('SELECT current_database() AS db');
    await client.query('BEGIN');
    for (const statement of reloadTriggerStatements(channel, schema)) await client.query(statement);
    await client.query('COMMIT');
    const database = String(rows[0]?.db ?? '');
    process.stdout.write(
      [
        `tablegate: installed the schema reload trigger in database ${database}:`,
        `  function ${schema}.${RELOAD_FUNCTION}() sends NOTIFY ${channel}`,
        `  event trigger ${RELOAD_TRIGGERS.ddl} ON ddl_command_end (CREATE, ALTER, GRANT, REVOKE, COMMENT, ...)`,
        `  event trigger ${RELOAD_TRIGGERS.drop} ON sql_drop (DROP, ALTER TABLE ... DROP COLUMN, ...)`,
        '',
      ].join('\n'),
    );
    return 0;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    const code = (err as { code?: unknown }).code;
    const hint = code === '42501' ? '; creating an event trigger needs a superuser: pass --database-url with one' : '';
    return fail(`could not install the reload trigger: ${messageOf(err)}${hint}`);
  } finally {
    await client.end().catch(() => undefined);
  }
}

function fail(message: string): number {
  process.stderr.write(`tablegate: ${message}\n`);
  return 1;
}
