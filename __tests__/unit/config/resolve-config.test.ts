import * as path from 'node:path';
import * as util from 'node:util';
import { gatewayKeys } from '../../../lib/config/config-keys';
import type { GatewayOptions } from '../../../lib/config/gateway-options';
import { resolveConfig } from '../../../lib/config/resolve-config';
import { GatewayConfigError } from '../../../lib/errors/gateway-config-error';
import { useTempFiles } from '../support/temp-files';
import { thrown } from '../support/thrown';

const url = 'postgres://gateway:hunter2@localhost:5432/app';
const noEnv = {};

const { write: writeToml, dir: tempDir } = useTempFiles('tablegate-resolve-');
const errorOf = (fn: () => unknown): GatewayConfigError => thrown(fn, GatewayConfigError);

/** For options a caller could only pass from plain JavaScript (typos, wrong types). */
function untyped(options: Record<string, unknown>): GatewayOptions {
  return options as GatewayOptions;
}

describe('resolveConfig defaults', () => {
  it('applies the built-in default of every key', () => {
    const config = resolveConfig({ databaseUrl: url }, noEnv);
    expect(config).toMatchObject({
      bind: '127.0.0.1:3000',
      schemas: ['public'],
      rpcRequireSchemaQualified: false,
      rpcSignatureCheck: false,
      requireAuth: true,
      defaultLimit: 100,
      maxLimit: 1000,
      maxRequestBodyBytes: 1048576,
      maxBatchSize: 1000,
      statementTimeoutMs: 30000,
      explainEnabled: true,
      jwtAlgorithms: ['HS256'],
      jwtClockSkewS: 30,
      requireTenant: false,
      allowRlsBypassRole: false,
      devMode: false,
      poolMax: 10,
      poolConnectionTimeoutMs: 5000,
      access: { enabled: false, path: undefined, policy: undefined },
    });
    for (const key of gatewayKeys.filter((k) => k.default === undefined && k.option !== 'databaseUrl')) {
      expect([key.option, (config as unknown as Record<string, unknown>)[key.option]]).toEqual([key.option, undefined]);
    }
  });

  it('ignores options that are explicitly undefined (e.g. an unset process.env value)', () => {
    const file = writeToml('undefined.toml', '[gateway]\nmax_limit = 500\nadmin_token = "from-file"\n');
    const config = resolveConfig({ databaseUrl: url, configFile: file, maxLimit: undefined, adminToken: undefined }, noEnv);
    expect(config.maxLimit).toBe(500);
    expect(config.adminToken).toBe('from-file');
  });
});

describe('resolveConfig precedence: option > file > env > default', () => {
  const file = (): string =>
    writeToml('precedence.toml', '[gateway]\nmax_limit = 500\ndefault_limit = 50\njwt_secret = "file-secret"\ndev_mode = false\n');

  it('lets an explicit option override the file', () => {
    const config = resolveConfig({ databaseUrl: url, configFile: file(), maxLimit: 700 }, noEnv);
    expect(config.maxLimit).toBe(700);
    expect(config.defaultLimit).toBe(50);
  });

  it('lets the file override env JWT_SECRET and GW_DEV_MODE', () => {
    const config = resolveConfig({ databaseUrl: url, configFile: file() }, { JWT_SECRET: 'env-secret', GW_DEV_MODE: 'true' });
    expect(config.jwtSecret).toBe('file-secret');
    expect(config.devMode).toBe(false);
  });

  it('lets an option override env JWT_SECRET', () => {
    expect(resolveConfig({ databaseUrl: url, jwtSecret: 'option-secret' }, { JWT_SECRET: 'env-secret' }).jwtSecret).toBe('option-secret');
  });

  it('takes JWT_SECRET and GW_DEV_MODE from the env passed in', () => {
    const config = resolveConfig({ databaseUrl: url }, { JWT_SECRET: 'env-secret', GW_DEV_MODE: 'true' });
    expect(config.jwtSecret).toBe('env-secret');
    expect(config.devMode).toBe(true);
  });

  it('turns dev mode on only for GW_DEV_MODE exactly "true"', () => {
    for (const value of ['TRUE', '1', 'yes', 'false', '']) {
      expect(resolveConfig({ databaseUrl: url }, { GW_DEV_MODE: value }).devMode).toBe(false);
    }
  });

  it('treats an empty JWT_SECRET as unset, never as the key', () => {
    expect(resolveConfig({ databaseUrl: url }, { JWT_SECRET: '' }).jwtSecret).toBeUndefined();
  });

  it('does not read process.env when an env object is passed', () => {
    const saved = process.env['JWT_SECRET'];
    process.env['JWT_SECRET'] = 'process-secret';
    try {
      expect(resolveConfig({ databaseUrl: url }, noEnv).jwtSecret).toBeUndefined();
    } finally {
      if (saved === undefined) delete process.env['JWT_SECRET'];
      else process.env['JWT_SECRET'] = saved;
    }
  });
});

describe('resolveConfig option errors', () => {
  it('rejects an unknown option with the nearest camelCase name', () => {
    const error = errorOf(() => resolveConfig(untyped({ databaseUrl: url, maxLimt: 5 }), noEnv));
    expect(error.message).toBe('unknown option `maxLimt`; did you mean `maxLimit`?');
    expect(error.key).toBe('maxLimt');
  });

  it('suggests the camelCase form for a snake_case option', () => {
    expect(errorOf(() => resolveConfig(untyped({ databaseUrl: url, admin_token: 'x' }), noEnv)).message).toBe(
      'unknown option `admin_token`; did you mean `adminToken`?',
    );
  });

  it('rejects an unknown access option', () => {
    expect(errorOf(() => resolveConfig(untyped({ databaseUrl: url, access: { enabeld: true } }), noEnv)).message).toBe(
      'unknown option `access.enabeld`; did you mean `access.enabled`?',
    );
  });

  it('names the key and the expected type on a wrong type', () => {
    const error = errorOf(() => resolveConfig(untyped({ databaseUrl: url, maxLimit: '10' }), noEnv));
    expect(error.message).toBe('option `maxLimit` must be an integer >= 1 (got "10"); e.g. maxLimit: 1000');
    expect(error.key).toBe('maxLimit');
  });

  it('rejects a non-boolean security flag instead of coercing it', () => {
    expect(errorOf(() => resolveConfig(untyped({ databaseUrl: url, requireAuth: 'false' }), noEnv)).message).toContain(
      'option `requireAuth` must be true or false',
    );
  });

  it('never quotes a secret in a type error', () => {
    const error = errorOf(() => resolveConfig(untyped({ databaseUrl: url, adminToken: 987654321 }), noEnv));
    expect(error.message).toContain('option `adminToken`');
    expect(error.message).not.toContain('987654321');
  });

  it('rejects an unknown stage name with a suggestion, and a stage that is not a function', () => {
    expect(errorOf(() => resolveConfig(untyped({ databaseUrl: url, stages: { polcy: () => undefined } }), noEnv)).message).toBe(
      'unknown stage `stages.polcy`; did you mean `stages.policy`?',
    );
    expect(errorOf(() => resolveConfig(untyped({ databaseUrl: url, stages: { auth: 'x' } }), noEnv)).key).toBe('stages.auth');
  });

  it('reports a file error through resolveConfig', () => {
    const file = writeToml('gw.toml', '[gateway]\nmax_limt = 5\n');
    expect(errorOf(() => resolveConfig({ databaseUrl: url, configFile: file }, noEnv)).message).toBe(
      `unknown key \`max_limt\` in [gateway] of ${file}; did you mean \`max_limit\`?`,
    );
  });
});

describe('resolveConfig cross-field checks', () => {
  it('requires database_url unless a pool is given', () => {
    const error = errorOf(() => resolveConfig({}, noEnv));
    expect(error.key).toBe('databaseUrl');
    expect(error.message).toContain('database_url is required');
  });

  it('takes database_url from env DATABASE_URL below the file and the option', () => {
    const env = { DATABASE_URL: 'postgres://env@db/app' };
    expect(resolveConfig({}, env).databaseUrl).toBe('postgres://env@db/app');
    const file = writeToml('dburl.toml', `[gateway]\ndatabase_url = "${url}"\n`);
    expect(resolveConfig({ configFile: file }, env).databaseUrl).toBe(url);
    expect(resolveConfig({ databaseUrl: 'postgres://option@db/app' }, env).databaseUrl).toBe('postgres://option@db/app');
    expect(errorOf(() => resolveConfig({}, { DATABASE_URL: '' })).message).toContain('database_url is required');
  });

  it('accepts a pool instead, and then ignores a database_url from the file', () => {
    const file = writeToml('pool.toml', `[gateway]\ndatabase_url = "${url}"\n`);
    const pool = { connect: () => undefined, query: () => undefined } as unknown as NonNullable<GatewayOptions['pool']>;
    expect(resolveConfig({ pool, configFile: file }, noEnv).databaseUrl).toBeUndefined();
    expect(errorOf(() => resolveConfig({ pool, databaseUrl: url }, noEnv)).message).toContain('not both');
    expect(errorOf(() => resolveConfig(untyped({ pool: {} }), noEnv)).key).toBe('pool');
  });

  it('refuses connection-policy settings that a given pool would silently skip', () => {
    const pool = { connect: () => undefined, query: () => undefined } as unknown as NonNullable<GatewayOptions['pool']>;
    const file = writeToml('pool-policy.toml', `[gateway]\ndatabase_url = "${url}?sslmode=verify-full&sslrootcert=ca.pem"\n`);
    expect(errorOf(() => resolveConfig({ pool, configFile: file }, noEnv)).message).toMatch(/sets connection-policy parameters .*which a given pool would not follow/);
    const gss = { provider: 'callback' as const, token: () => undefined };
    expect(errorOf(() => resolveConfig({ pool, gss }, noEnv)).key).toBe('gss');
    expect(resolveConfig({ databaseUrl: url, gss }, noEnv).databaseUrl).toBe(url);
  });

  it('rejects a database URL that is not postgres:// without quoting it', () => {
    const error = errorOf(() => resolveConfig({ databaseUrl: 'mysql://root:hunter2@db/app' }, noEnv));
    expect(error.message).toContain('postgres://');
    expect(error.message).not.toContain('hunter2');
  });

  it('rejects default_limit > max_limit, naming both keys where they were set', () => {
    expect(errorOf(() => resolveConfig({ databaseUrl: url, defaultLimit: 200, maxLimit: 100 }, noEnv)).message).toBe(
      'option `defaultLimit` (200) must be <= option `maxLimit` (100); lower the first or raise the second',
    );
    const file = writeToml('limits.toml', '[gateway]\ndefault_limit = 2000\n');
    expect(errorOf(() => resolveConfig({ databaseUrl: url, configFile: file }, noEnv)).message).toBe(
      `\`default_limit\` in [gateway] of ${file} (2000) must be <= \`max_limit\` (default) (1000); lower the first or raise the second`,
    );
  });

  it('refuses dev mode without a JWT secret', () => {
    const error = errorOf(() => resolveConfig({ databaseUrl: url }, { GW_DEV_MODE: 'true' }));
    expect(error.message).toMatch(/^GW_DEV_MODE=true requires JWT_SECRET/);
    expect(error.message).toContain('env GW_DEV_MODE');
    expect(errorOf(() => resolveConfig({ databaseUrl: url, devMode: true }, noEnv)).message).toContain('option `devMode`');
  });

  it('lets an explicit devMode: false override GW_DEV_MODE=true', () => {
    expect(resolveConfig({ databaseUrl: url, devMode: false }, { GW_DEV_MODE: 'true' }).devMode).toBe(false);
  });

  it('refuses dev mode on a non-loopback bind', () => {
    const env = { GW_DEV_MODE: 'true', JWT_SECRET: 's' };
    expect(errorOf(() => resolveConfig({ databaseUrl: url, bind: '0.0.0.0:3000' }, env)).key).toBe('bind');
    for (const bind of ['localhost:3000', '127.0.0.1:0', '[::1]:8080']) {
      expect(resolveConfig({ databaseUrl: url, bind }, env).bind).toBe(bind);
    }
  });

  it('requires bind to be host:port', () => {
    for (const bind of ['3000', 'localhost', 'localhost:99999', ':3000', '::1:3000']) {
      expect(errorOf(() => resolveConfig({ databaseUrl: url, bind }, noEnv)).key).toBe('bind');
    }
  });

  it('requires schemas to be a non-empty list of distinct schema names', () => {
    expect(errorOf(() => resolveConfig({ databaseUrl: url, schemas: [] }, noEnv)).key).toBe('schemas');
    expect(errorOf(() => resolveConfig({ databaseUrl: url, schemas: ['api', 'api'] }, noEnv)).message).toContain('twice');
    expect(resolveConfig({ databaseUrl: url, schemas: ['api', '_private', 'données'] }, noEnv).schemas).toEqual(['api', '_private', 'données']);
  });

  it('accepts every name PostgreSQL can store as a schema, quoted ones included', () => {
    const names = ['Mixed Case', 'a-b', 'we"ird', 'x@y', 'api; drop', '1st', ' padded ', 'é'.repeat(31)];
    expect(resolveConfig({ databaseUrl: url, schemas: names }, noEnv).schemas).toEqual(names);
    const file = writeToml('quoted-schemas.toml', '[gateway]\nschemas = ["Mixed Case", "a-b", \'we"ird\', "x@y"]\n');
    expect(resolveConfig({ databaseUrl: url, configFile: file }, noEnv).schemas).toEqual(['Mixed Case', 'a-b', 'we"ird', 'x@y']);
  });

  it('refuses schema names PostgreSQL cannot store: NUL, longer than 63 bytes, empty', () => {
    const nul = errorOf(() => resolveConfig({ databaseUrl: url, schemas: ['public', 'a\u0000b'] }, noEnv));
    expect(nul.key).toBe('schemas');
    expect(nul.message).toContain('at most 63 bytes');
    expect(errorOf(() => resolveConfig({ databaseUrl: url, schemas: ['é'.repeat(32)] }, noEnv)).key).toBe('schemas'); // 64 bytes
    expect(errorOf(() => resolveConfig({ databaseUrl: url, schemas: [''] }, noEnv)).key).toBe('schemas');
  });

  it('takes extra_search_path as any schema names, in order, and refuses what PostgreSQL would not keep', () => {
    expect(resolveConfig({ databaseUrl: url }, noEnv).extraSearchPath).toEqual(['public']);
    expect(resolveConfig({ databaseUrl: url, extraSearchPath: [] }, noEnv).extraSearchPath).toEqual([]);
    const odd = ['Mixed Case', 'a-b', 'we"ird', 'ext,ra', '$user', 'x'.repeat(63)];
    expect(resolveConfig({ databaseUrl: url, extraSearchPath: odd }, noEnv).extraSearchPath).toEqual(odd);
    const file = writeToml('search-path.toml', '[gateway]\nextra_search_path = ["extensions", "public"]\n');
    expect(resolveConfig({ databaseUrl: url, configFile: file }, noEnv).extraSearchPath).toEqual(['extensions', 'public']);
    for (const bad of ['', ' public', 'public ', 'a\u0000b', 'tab\there', 'x'.repeat(64), 'é'.repeat(32)]) {
      const error = errorOf(() => resolveConfig({ databaseUrl: url, extraSearchPath: ['public', bad] }, noEnv));
      expect([bad, error.key, error.message]).toEqual([bad, 'extraSearchPath', expect.stringContaining('must list schema names')]);
    }
    expect(errorOf(() => resolveConfig({ databaseUrl: url, extraSearchPath: ['ext', 'ext'] }, noEnv)).message).toContain('"ext" twice');
    expect(errorOf(() => resolveConfig({ databaseUrl: url, extraSearchPath: untyped({ extraSearchPath: 'public' }).extraSearchPath }, noEnv)).message).toContain(
      'option `extraSearchPath` must be a list of schema names',
    );
    expect(errorOf(() => resolveConfig({ databaseUrl: url, configFile: writeToml('sp-bad.toml', '[gateway]\nextra_search_path = ["a", "a"]\n') }, noEnv)).message).toMatch(
      /^`extra_search_path` in \[gateway\] of .*sp-bad\.toml lists "a" twice/,
    );
  });

  it('refuses both legacy policy sources from one place, and lets an option replace the file’s', () => {
    expect(errorOf(() => resolveConfig({ databaseUrl: url, policy: 'policies: []', policyPath: 'p.yaml' }, noEnv)).message).toContain('keep only one');
    const file = writeToml('legacy.toml', '[gateway]\npolicy_path = "legacy.yaml"\n');
    const config = resolveConfig({ databaseUrl: url, configFile: file, policy: 'policies: []' }, noEnv);
    expect(config.policy).toBe('policies: []');
    expect(config.policyPath).toBeUndefined();
  });
});

describe('resolveConfig [access]', () => {
  it('enables a given policy unless enabled is explicitly false', () => {
    expect(resolveConfig({ databaseUrl: url, access: { path: 'a.toml' } }, noEnv).access).toEqual({ enabled: true, path: 'a.toml', policy: undefined });
    expect(resolveConfig({ databaseUrl: url, access: { path: 'a.toml', enabled: false } }, noEnv).access.enabled).toBe(false);
  });

  it('rejects enabled without a policy, and both path and policy', () => {
    expect(errorOf(() => resolveConfig({ databaseUrl: url, access: { enabled: true } }, noEnv)).key).toBe('access.enabled');
    expect(errorOf(() => resolveConfig({ databaseUrl: url, access: { path: 'a.toml', policy: {} } }, noEnv)).key).toBe('access.policy');
  });

  it("resolves the file's access path against the file's directory; an inline option policy replaces it", () => {
    const file = writeToml('access.toml', '[access]\nenabled = true\npath = "policies/access.toml"\n');
    expect(resolveConfig({ databaseUrl: url, configFile: file }, noEnv).access).toEqual({
      enabled: true,
      path: path.join(tempDir(), 'policies', 'access.toml'),
      policy: undefined,
    });
    const inline = { default_decision: 'deny', tables: { orders: { operations: ['read'] } } };
    const config = resolveConfig({ databaseUrl: url, configFile: file, access: { policy: inline } }, noEnv);
    expect(config.access).toEqual({ enabled: true, path: undefined, policy: inline });
  });

  it('rejects an inline policy that is not plain data', () => {
    const policy = { default_decision: 'deny', check: () => true };
    expect(errorOf(() => resolveConfig({ databaseUrl: url, access: { policy } }, noEnv)).key).toBe('access.policy');
  });

  it('freezes a copy of an inline policy, not the caller’s object', () => {
    const inline = { default_decision: 'deny', tables: {} as Record<string, unknown> };
    const config = resolveConfig({ databaseUrl: url, access: { policy: inline } }, noEnv);
    expect(Object.isFrozen(inline)).toBe(false);
    expect(Object.isFrozen(config.access.policy?.['tables'])).toBe(true);
  });
});

describe('resolveConfig result', () => {
  const secrets = { databaseUrl: url, jwtSecret: 'jwt-s3cret', adminToken: 'admin-t0ken', cursorSecret: 'cursor-s3cret' };

  it('hides secrets from JSON.stringify, util.inspect and Object.keys but keeps them readable', () => {
    const config = resolveConfig(secrets, noEnv);
    const shown = [JSON.stringify(config), util.inspect(config, { depth: 5 }), util.inspect(config, { showHidden: true, depth: 5 }), Object.keys(config).join(',')];
    for (const text of shown) {
      for (const value of ['hunter2', 'jwt-s3cret', 'admin-t0ken', 'cursor-s3cret']) expect(text).not.toContain(value);
    }
    for (const key of Object.keys(secrets)) expect(Object.keys(config)).not.toContain(key);
    expect({ ...config }).not.toHaveProperty('jwtSecret');
    expect(config.jwtSecret).toBe('jwt-s3cret');
    expect(config.adminToken).toBe('admin-t0ken');
    expect(config.cursorSecret).toBe('cursor-s3cret');
    expect(config.databaseUrl).toBe(url);
  });

  it('is deeply frozen: assignment throws in strict mode', () => {
    'use strict';
    const config = resolveConfig({ ...secrets, jwtAudience: ['a', 'b'] }, noEnv);
    expect(Object.isFrozen(config)).toBe(true);
    expect(() => {
      (config as { maxLimit: number }).maxLimit = 5;
    }).toThrow(TypeError);
    expect(() => {
      (config as { jwtSecret: string }).jwtSecret = 'stolen';
    }).toThrow(TypeError);
    expect(() => (config.schemas as string[]).push('x')).toThrow(TypeError);
    expect(() => (config.jwtAudience as string[]).push('x')).toThrow(TypeError);
    expect(() => {
      (config.access as { enabled: boolean }).enabled = true;
    }).toThrow(TypeError);
    expect(config.maxLimit).toBe(1000);
  });

  it('does not share arrays with the caller’s options', () => {
    const schemas = ['public'];
    const config = resolveConfig({ databaseUrl: url, schemas }, noEnv);
    schemas.push('other');
    expect(config.schemas).toEqual(['public']);
  });
});

describe('resolveConfig explain_roles / explain_scopes', () => {
  it('are unset by default (nobody may explain outside dev mode)', () => {
    const config = resolveConfig({ databaseUrl: url }, noEnv);
    expect([config.explainRoles, config.explainScopes]).toEqual([undefined, undefined]);
  });

  it('take lists of names as options and in gw.toml; an empty list is allowed', () => {
    expect(resolveConfig({ databaseUrl: url, explainRoles: ['admin', 'dba'], explainScopes: [] }, noEnv)).toMatchObject({ explainRoles: ['admin', 'dba'], explainScopes: [] });
    const file = writeToml('explain.toml', '[gateway]\nexplain_roles = ["admin"]\nexplain_scopes = ["db:explain"]\n');
    expect(resolveConfig({ databaseUrl: url, configFile: file }, noEnv)).toMatchObject({ explainRoles: ['admin'], explainScopes: ['db:explain'] });
  });

  it('refuse a string, an empty name or a duplicate, naming the key and an example', () => {
    expect(errorOf(() => resolveConfig(untyped({ databaseUrl: url, explainRoles: 'admin' }), noEnv)).message).toBe(
      'option `explainRoles` must be a list of role names (non-empty strings, no duplicates) (got "admin"); e.g. explainRoles: ["admin"]',
    );
    expect(errorOf(() => resolveConfig(untyped({ databaseUrl: url, explainScopes: [''] }), noEnv)).key).toBe('explainScopes');
    expect(errorOf(() => resolveConfig({ databaseUrl: url, explainRoles: ['a', 'a'] }, noEnv)).key).toBe('explainRoles');
    const file = writeToml('explain-bad.toml', '[gateway]\nexplain_roles = "admin"\n');
    const error = errorOf(() => resolveConfig({ databaseUrl: url, configFile: file }, noEnv));
    expect(error.message).toContain('explain_roles');
    expect(error.message).toContain('a list of role names');
  });

  it('suggests the right key for a typo', () => {
    expect(errorOf(() => resolveConfig(untyped({ databaseUrl: url, explainRole: ['admin'] }), noEnv)).message).toBe(
      'unknown option `explainRole`; did you mean `explainRoles`?',
    );
  });
});
