import * as path from 'node:path';
import { loadConfigFile } from '../../../lib/config/load-config-file';
import { GatewayConfigError } from '../../../lib/errors/gateway-config-error';
import { useTempFiles } from '../support/temp-files';
import { thrown } from '../support/thrown';

const { write: writeToml, dir: tempDir } = useTempFiles('tablegate-config-');
const errorOf = (fn: () => unknown): GatewayConfigError => thrown(fn, GatewayConfigError);

describe('loadConfigFile', () => {
  it('returns [gateway] and [access] values under their option names', () => {
    const file = writeToml('ok.toml', '[gateway]\nmax_limit = 50\nrequire_auth = false\n[access]\nenabled = true\n');
    const values = loadConfigFile(file);
    expect(values.gateway).toEqual({ maxLimit: 50, requireAuth: false });
    expect(values.access).toEqual({ enabled: true });
  });

  it('names an unknown [gateway] key, the file, and the nearest known key', () => {
    const file = writeToml('gw.toml', '[gateway]\nmax_limt = 50\n');
    const error = errorOf(() => loadConfigFile(file));
    expect(error.message).toBe(`unknown key \`max_limt\` in [gateway] of ${file}; did you mean \`max_limit\`?`);
    expect(error.key).toBe('max_limt');
  });

  it('rejects an unknown [access] key', () => {
    const file = writeToml('access-typo.toml', '[access]\nenabeld = true\n');
    expect(errorOf(() => loadConfigFile(file)).message).toBe(`unknown key \`enabeld\` in [access] of ${file}; did you mean \`enabled\`?`);
  });

  it('rejects the option-only access.policy in a file, saying where it is accepted', () => {
    const file = writeToml('access-policy.toml', '[access]\npolicy = "x"\n');
    expect(errorOf(() => loadConfigFile(file)).message).toContain('accepted only as the access.policy option');
  });

  it('rejects an unknown section with a suggestion', () => {
    const file = writeToml('section.toml', '[gatway]\nmax_limit = 5\n');
    expect(errorOf(() => loadConfigFile(file)).message).toBe(`unknown section [gatway] in ${file}; did you mean [gateway]?`);
  });

  it('rejects a key above any section and says which section it belongs in', () => {
    const file = writeToml('toplevel.toml', 'max_limit = 5\n[gateway]\n');
    expect(errorOf(() => loadConfigFile(file)).message).toBe(`key \`max_limit\` is outside any section in ${file}; move it under [gateway]`);
  });

  it('names the key, the expected type and an example on a wrong type', () => {
    const file = writeToml('type.toml', '[gateway]\nmax_limit = "lots"\n');
    expect(errorOf(() => loadConfigFile(file)).message).toBe(
      `\`max_limit\` in [gateway] of ${file} must be an integer >= 1 (got "lots"); e.g. max_limit = 1000`,
    );
  });

  it('rejects an algorithm outside the list (never `none`)', () => {
    const file = writeToml('alg.toml', '[gateway]\njwt_algorithms = ["none"]\n');
    const error = errorOf(() => loadConfigFile(file));
    expect(error.key).toBe('jwt_algorithms');
    expect(error.message).toContain('HS256');
  });

  it('reports a TOML syntax error with the file name and line, without quoting the source', () => {
    const file = writeToml('broken.toml', '[gateway]\ndatabase_url = "postgres://u:hunter2@db/app"\nmax_limit = = 3\n');
    const error = errorOf(() => loadConfigFile(file));
    expect(error.message).toContain(file);
    expect(error.message).toContain('line 3');
    expect(error.message).not.toContain('hunter2');
  });

  it('does not echo a secret value in a type error', () => {
    const file = writeToml('secret-type.toml', '[gateway]\nadmin_token = ["hunter2"]\n');
    const error = errorOf(() => loadConfigFile(file));
    expect(error.message).toContain('`admin_token`');
    expect(error.message).not.toContain('hunter2');
  });

  it('says which file could not be read', () => {
    const missing = path.join(tempDir(), 'missing.toml');
    const error = errorOf(() => loadConfigFile(missing));
    expect(error.message).toContain(missing);
    expect(error.message).toContain('ENOENT');
    expect(error.key).toBe('configFile');
  });

  it("resolves relative paths against the config file's directory and keeps absolute ones", () => {
    const file = writeToml(
      'paths.toml',
      [
        '[gateway]',
        'allow_list_path = "lists/allow.txt"',
        'policy_path = "../policy.yaml"',
        'rpc_allowlist_path = "/etc/tablegate/rpc.txt"',
        'jwt_public_key_path = "keys/jwt.pem"',
        'jwks_url = "relative/not/a/path"',
        '[access]',
        'path = "access.toml"',
      ].join('\n'),
    );
    const values = loadConfigFile(file);
    expect(values.gateway['allowListPath']).toBe(path.join(tempDir(), 'lists', 'allow.txt'));
    expect(values.gateway['policyPath']).toBe(path.join(path.dirname(tempDir()), 'policy.yaml'));
    expect(values.gateway['rpcAllowlistPath']).toBe('/etc/tablegate/rpc.txt');
    expect(values.gateway['jwtPublicKeyPath']).toBe(path.join(tempDir(), 'keys', 'jwt.pem'));
    expect(values.gateway['jwksUrl']).toBe('relative/not/a/path');
    expect(values.access['path']).toBe(path.join(tempDir(), 'access.toml'));
  });
});
