/**
 * `rate_limit` in gw.toml and the `rateLimit` option (docs/scaling-out.md#rate-limits): an inline
 * table whose keys are checked one by one (an unknown key is an error, never ignored), the store
 * named or given as an express-rate-limit Store object (option only), and off by default.
 */
import { MemoryStore } from 'express-rate-limit';
import type { GatewayOptions } from '../../../lib/config/gateway-options';
import { resolveConfig } from '../../../lib/config/resolve-config';
import { GatewayConfigError } from '../../../lib/errors/gateway-config-error';
import { useTempFiles } from '../support/temp-files';
import { thrown } from '../support/thrown';

const url = 'postgres://gateway:hunter2@localhost:5432/app';
const noEnv = {};
const { write } = useTempFiles('tablegate-rate-limit-');
const errorOf = (fn: () => unknown): GatewayConfigError => thrown(fn, GatewayConfigError);
const untyped = (options: Record<string, unknown>): GatewayOptions => options as GatewayOptions;
const fromFile = (line: string) => {
  const file = write('gw.toml', `[gateway]\n${line}\n`);
  return { file, resolve: () => resolveConfig({ databaseUrl: url, configFile: file }, noEnv) };
};

describe('rate_limit in gw.toml', () => {
  it('is off by default', () => {
    expect(resolveConfig({ databaseUrl: url }, noEnv).rateLimit).toBeUndefined();
  });

  it('reads the inline table under the option names, store defaulting to memory', () => {
    expect(fromFile('rate_limit = { requests = 100, window_s = 60, store = "postgres" }').resolve().rateLimit).toEqual({ requests: 100, windowS: 60, store: 'postgres' });
    expect(fromFile('rate_limit = { requests = 5, window_s = 1 }').resolve().rateLimit).toEqual({ requests: 5, windowS: 1, store: 'memory' });
  });

  it('names an unknown key of the table and the nearest known one', () => {
    const { file, resolve } = fromFile('rate_limit = { requests = 100, window = 60 }');
    const error = errorOf(resolve);
    expect(error.message).toBe(`unknown key \`window\` in \`rate_limit\` in [gateway] of ${file}; did you mean \`window_s\`?`);
    expect(error.key).toBe('rate_limit.window');
  });

  it('names a missing key with an example', () => {
    const { file, resolve } = fromFile('rate_limit = { requests = 100 }');
    expect(errorOf(resolve).message).toBe(`\`rate_limit\` in [gateway] of ${file} needs \`window_s\`; e.g. rate_limit = { requests = 100, window_s = 60, store = "memory" }`);
  });

  it('names a wrong value of one key', () => {
    const { file, resolve } = fromFile('rate_limit = { requests = 0, window_s = 60 }');
    expect(errorOf(resolve).message).toBe(
      `\`rate_limit.requests\` in [gateway] of ${file} must be an integer >= 1 and <= 2147483647 (got 0); e.g. rate_limit = { requests = 100, window_s = 60, store = "memory" }`,
    );
    expect(errorOf(fromFile('rate_limit = { requests = 1, window_s = 60, store = "redis" }').resolve).message).toMatch(
      /^`rate_limit.store` in \[gateway\] of .* must be "memory" or "postgres" \(got "redis"\)/,
    );
    // A window whose milliseconds overflow a Node timer.
    expect(errorOf(fromFile('rate_limit = { requests = 1, window_s = 2147484 }').resolve).message).toMatch(/`rate_limit.window_s` .* must be an integer >= 1 and <= 2147483 \(got 2147484\)/);
  });

  it('refuses a value that is not a table', () => {
    const { file, resolve } = fromFile('rate_limit = 100');
    expect(errorOf(resolve).message).toBe(`\`rate_limit\` in [gateway] of ${file} must be an inline table (got 100); e.g. rate_limit = { requests = 100, window_s = 60, store = "memory" }`);
  });

  it('refuses the postgres store while its schema is exposed', () => {
    const { resolve } = fromFile('rate_limit = { requests = 1, window_s = 1, store = "postgres" }\nschemas = ["public", "tablegate"]');
    expect(errorOf(resolve).message).toMatch(/counters live in schema "tablegate".*remove "tablegate" from schemas/);
  });
});

describe('the rateLimit option', () => {
  it('takes camelCase keys and overrides the file', () => {
    const { file } = fromFile('rate_limit = { requests = 100, window_s = 60 }');
    expect(resolveConfig({ databaseUrl: url, configFile: file, rateLimit: { requests: 3, windowS: 2, store: 'memory' } }, noEnv).rateLimit).toEqual({ requests: 3, windowS: 2, store: 'memory' });
  });

  it('keeps a host Store object as it is, unfrozen, and freezes the rest', () => {
    const store = new MemoryStore();
    const config = resolveConfig({ databaseUrl: url, rateLimit: { requests: 3, windowS: 2, store } }, noEnv);
    expect(config.rateLimit?.store).toBe(store);
    expect(Object.isFrozen(store)).toBe(false);
    expect(Object.isFrozen(config.rateLimit)).toBe(true);
  });

  it('refuses an object that is not a Store', () => {
    const error = errorOf(() => resolveConfig(untyped({ databaseUrl: url, rateLimit: { requests: 3, windowS: 2, store: { increment() {} } } }), noEnv));
    expect(error.message).toBe('option `rateLimit.store` must be "memory", "postgres" or an express-rate-limit Store, an object with increment, decrement and resetKey methods (missing decrement, resetKey)');
  });

  it('names unknown, missing and wrong keys in the option spelling', () => {
    expect(errorOf(() => resolveConfig(untyped({ databaseUrl: url, rateLimit: { requests: 3, window_s: 2 } }), noEnv)).message).toBe(
      'unknown key `window_s` in option `rateLimit`; did you mean `windowS`?',
    );
    expect(errorOf(() => resolveConfig(untyped({ databaseUrl: url, rateLimit: { windowS: 2 } }), noEnv)).message).toBe(
      'option `rateLimit` needs `requests`; e.g. rateLimit: { requests: 100, windowS: 60, store: "memory" }',
    );
    expect(errorOf(() => resolveConfig(untyped({ databaseUrl: url, rateLimit: { requests: 1.5, windowS: 2 } }), noEnv)).message).toMatch(
      /^option `rateLimit.requests` must be an integer >= 1 and <= 2147483647 \(got 1.5\)/,
    );
    expect(errorOf(() => resolveConfig(untyped({ databaseUrl: url, rateLimit: { requests: 1, windowS: 2, store: 'redis' } }), noEnv)).message).toMatch(
      /^option `rateLimit.store` must be "memory" or "postgres" or an express-rate-limit Store object \(got "redis"\)/,
    );
    expect(errorOf(() => resolveConfig(untyped({ databaseUrl: url, rateLimit: 100 }), noEnv)).message).toMatch(/^option `rateLimit` must be an object \(got 100\)/);
  });

  it('ignores explicitly undefined keys, as for every option', () => {
    expect(resolveConfig({ databaseUrl: url, rateLimit: { requests: 3, windowS: 2, store: undefined as never } }, noEnv).rateLimit).toEqual({ requests: 3, windowS: 2, store: 'memory' });
  });
});

describe('server_timing', () => {
  it('is on by default and turned off in gw.toml or by the option', () => {
    expect(resolveConfig({ databaseUrl: url }, noEnv).serverTiming).toBe(true);
    expect(fromFile('server_timing = false').resolve().serverTiming).toBe(false);
    expect(resolveConfig({ databaseUrl: url, serverTiming: false }, noEnv).serverTiming).toBe(false);
    expect(errorOf(() => fromFile('server_timing = "no"').resolve()).message).toMatch(/`server_timing` in \[gateway\] of .* must be true or false \(got "no"\)/);
  });
});

describe('the metrics option', () => {
  it('is checked key by key, fail closed', () => {
    expect(errorOf(() => resolveConfig(untyped({ databaseUrl: url, metrics: { prefx: 'a_' } }), noEnv)).message).toBe('unknown option `metrics.prefx`; did you mean `metrics.prefix`?');
    expect(errorOf(() => resolveConfig(untyped({ databaseUrl: url, metrics: { labels: {} } }), noEnv)).key).toBe('metrics.labels');
    expect(errorOf(() => resolveConfig(untyped({ databaseUrl: url, metrics: { registry: { metrics: () => '' } } }), noEnv)).key).toBe('metrics.registry');
    expect(errorOf(() => resolveConfig(untyped({ databaseUrl: url, metrics: { prefix: '1abc' } }), noEnv)).key).toBe('metrics.prefix');
    expect(errorOf(() => resolveConfig(untyped({ databaseUrl: url, metrics: null }), noEnv)).key).toBe('metrics');
    expect(() => resolveConfig(untyped({ databaseUrl: url, metrics: { prefix: 'orders_', defaultMetrics: false } }), noEnv)).not.toThrow();
  });
});
