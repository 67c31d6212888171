/**
 * The keys of schema reload and draining (docs/configuration.md, docs/scaling-out.md): defaults,
 * both spellings, and the values that are refused with a message naming the key.
 */
import type { GatewayOptions } from '../../../lib/config/gateway-options';
import { resolveConfig } from '../../../lib/config/resolve-config';
import { GatewayConfigError } from '../../../lib/errors/gateway-config-error';
import { useTempFiles } from '../support/temp-files';
import { thrown } from '../support/thrown';

const url = 'postgres://gateway:hunter2@localhost:5432/app';
const { write: writeToml } = useTempFiles('tablegate-reload-keys-');
const errorOf = (fn: () => unknown): GatewayConfigError => thrown(fn, GatewayConfigError);
const untyped = (options: Record<string, unknown>): GatewayOptions => options as GatewayOptions;

test('defaults: LISTEN on tablegate_reload through the pool connection, no polling, 10 s drain', () => {
  const config = resolveConfig({ databaseUrl: url }, {});
  expect(config).toMatchObject({ reloadListen: true, reloadChannel: 'tablegate_reload', schemaPollS: 0, drainTimeoutMs: 10000 });
  expect(config.reloadDatabaseUrl).toBeUndefined();
});

test('gw.toml keys and options', () => {
  const file = writeToml(
    'reload.toml',
    '[gateway]\nreload_listen = false\nreload_channel = "app_schema"\nreload_database_url = "postgres://direct@db:5432/app"\nschema_poll_s = 5\ndrain_timeout_ms = 2500\n',
  );
  const fromFile = resolveConfig({ databaseUrl: url, configFile: file }, {});
  expect(fromFile).toMatchObject({ reloadListen: false, reloadChannel: 'app_schema', schemaPollS: 5, drainTimeoutMs: 2500 });
  expect(fromFile.reloadDatabaseUrl).toBe('postgres://direct@db:5432/app');
  const fromOptions = resolveConfig({ databaseUrl: url, configFile: file, reloadChannel: 'other', schemaPollS: 0 }, {});
  expect(fromOptions).toMatchObject({ reloadChannel: 'other', schemaPollS: 0, drainTimeoutMs: 2500 });
});

test('reload_database_url is a secret: not enumerable, never in an error message', () => {
  const config = resolveConfig({ databaseUrl: url, reloadDatabaseUrl: 'postgres://direct:s3cret@db/app' }, {});
  expect(JSON.stringify(config)).not.toContain('s3cret');
  const error = errorOf(() => resolveConfig({ databaseUrl: url, reloadDatabaseUrl: 'mysql://x:s3cret@db/app' }, {}));
  expect(error.key).toBe('reloadDatabaseUrl');
  expect(error.message).toMatch(/reloadDatabaseUrl.*must be a postgres:\/\/ or postgresql:\/\/ URL/);
  expect(error.message).not.toContain('s3cret');
});

test.each(['Tablegate_Reload', 'tablegate-reload', 'tablegate reload', '1channel', '', 'a'.repeat(64)])('reload_channel %j is refused', (channel) => {
  const error = errorOf(() => resolveConfig({ databaseUrl: url, reloadChannel: channel }, {}));
  expect(error.key).toBe('reloadChannel');
  expect(error.message).toMatch(/lower-case channel name/);
});

test.each([
  ['schemaPollS', -1],
  ['schemaPollS', 1.5],
  ['schemaPollS', 2147484],
  ['drainTimeoutMs', -1],
  ['drainTimeoutMs', 2147483648],
  ['reloadListen', 'yes'],
])('option %s = %j is refused', (option, value) => {
  expect(errorOf(() => resolveConfig(untyped({ databaseUrl: url, [option]: value }), {})).key).toBe(option);
});

test('a typo in a reload key gets a suggestion', () => {
  const file = writeToml('typo.toml', '[gateway]\nschema_pol_s = 5\n');
  expect(errorOf(() => resolveConfig({ databaseUrl: url, configFile: file }, {})).message).toMatch(/did you mean `schema_poll_s`/);
});
