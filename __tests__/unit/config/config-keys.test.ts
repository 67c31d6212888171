import Ajv from 'ajv';
import { accessKeys, gatewayKeys, sectionSchema } from '../../../lib/config/config-keys';

const camel = (snake: string): string => snake.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());

describe('config key table', () => {
  it('spells every option as the camelCase of its gw.toml key', () => {
    for (const key of [...gatewayKeys, ...accessKeys]) expect([key.key, key.option]).toEqual([key.key, camel(key.key)]);
  });

  it('has no duplicate keys', () => {
    const names = gatewayKeys.map((k) => k.key);
    expect(new Set(names).size).toBe(names.length);
  });

  // change_feed holds a credential too: its database_url.
  it('marks exactly the credentials as secret', () => {
    expect(gatewayKeys.filter((k) => k.secret).map((k) => k.option).sort()).toEqual(['adminToken', 'changeFeed', 'cursorSecret', 'databaseUrl', 'jwtSecret', 'readReplicaUrls', 'reloadDatabaseUrl']);
  });

  it('takes only DATABASE_URL, JWT_SECRET and GW_DEV_MODE from the environment', () => {
    expect(gatewayKeys.filter((k) => k.env !== undefined).map((k) => [k.option, k.env])).toEqual([
      ['databaseUrl', 'DATABASE_URL'],
      ['jwtSecret', 'JWT_SECRET'],
      ['devMode', 'GW_DEV_MODE'],
    ]);
  });

  it('has defaults that pass its own schemas (strict ajv)', () => {
    const ajv = new Ajv({ strict: true, allowUnionTypes: true });
    const validate = ajv.compile(sectionSchema(gatewayKeys, 'file'));
    const defaults = Object.fromEntries(gatewayKeys.filter((k) => k.default !== undefined).map((k) => [k.key, k.default]));
    expect(validate(defaults)).toBe(true);
    const examples = Object.fromEntries(gatewayKeys.filter((k) => k.example !== undefined).map((k) => [k.key, k.example]));
    expect(validate(examples)).toBe(true);
  });

  it('never accepts the `none` JWT algorithm', () => {
    const validate = new Ajv({ strict: true, allowUnionTypes: true }).compile(sectionSchema(gatewayKeys, 'file'));
    expect(validate({ jwt_algorithms: ['none'] })).toBe(false);
    expect(validate({ jwt_algorithms: [] })).toBe(false);
  });

  it('leaves option-only keys out of the file schema', () => {
    const file = sectionSchema(accessKeys, 'file')['properties'] as Record<string, unknown>;
    const options = sectionSchema(accessKeys, 'options')['properties'] as Record<string, unknown>;
    expect(Object.keys(file)).toEqual(['enabled', 'path']);
    expect(Object.keys(options)).toEqual(['enabled', 'path', 'policy']);
  });
});
