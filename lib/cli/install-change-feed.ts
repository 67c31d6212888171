/**
 * `tablegate install-change-feed`: applies (or, with --print, prints) the one-time SQL of the
 * change feed (lib/cli/change-feed-sql.ts; docs/change-feed.md, "Installing").
 *
 * In: `--database-url` (the tables' owner) or the `database_url` of `--config`; the exposed
 * schemas, `change_feed.publication` and `change_feed.tenant_column` from the config. Out: a
 * summary on stdout and exit 0, or one error line on stderr and exit 1. Never: prints a URL or
 * password.
 */
import pg from 'pg';
import { resolveConfig } from '../config/resolve-config';
import { changeFeedDefaults } from '../config/config-keys';
import { changeFeedScript, type ChangeFeedScriptOptions } from './change-feed-sql';
import { messageOf } from './serve';

export interface InstallChangeFeedOptions {
  readonly configFile?: string | undefined;
  readonly databaseUrl?: string | undefined;
  readonly print?: boolean;
}

export async function installChangeFeed(opts: InstallChangeFeedOptions): Promise<number> {
  let script: ChangeFeedScriptOptions = { schemas: ['public'], publication: changeFeedDefaults.publication, tenantColumn: undefined };
  let url = opts.databaseUrl;
  try {
    if (opts.configFile !== undefined) {
      const config = resolveConfig({ configFile: opts.configFile, ...(url === undefined ? {} : { databaseUrl: url }) });
      script = { schemas: config.schemas, publication: config.changeFeed?.publication ?? changeFeedDefaults.publication, tenantColumn: config.changeFeed?.tenantColumn };
      url ??= config.databaseUrl;
    }
  } catch (err) {
    return fail(messageOf(err));
  }
  const sql = changeFeedScript(script);
  if (opts.print === true) {
    process.stdout.write(sql);
    return 0;
  }
  if (url === undefined) return fail('install-change-feed needs --database-url <url> or --config <gw.toml> with a database_url');
  const client = new pg.Client({ connectionString: url, application_name: 'tablegate-install' });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query(sql);
    const { rows } = await client.query<{ tables: string }>('SELECT count(*)::text AS tables FROM pg_publication_tables WHERE pubname = $1', [script.publication]);
    process.stdout.write(`tablegate: publication ${script.publication} covers ${rows[0]?.tables ?? '0'} table(s) of ${script.schemas.join(', ')}${script.tenantColumn ? `; REPLICA IDENTITY FULL on those with ${script.tenantColumn}` : ''}\n`);
    return 0;
  } catch (err) {
    return fail(`could not install the change feed: ${messageOf(err)}${(err as { code?: unknown }).code === '42501' ? '; run it as the owner of the tables' : ''}`);
  } finally {
    await client.end().catch(() => undefined);
  }
}

function fail(message: string): number {
  process.stderr.write(`tablegate: ${message}\n`);
  return 1;
}
