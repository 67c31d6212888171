/**
 * `[gateway] cors_origins` (docs/configuration.md, docs/security.md "Browsers and CORS"): exact
 * browser origins or a startup error that names the fix; never "*", never a value that could
 * not match a browser's Origin header.
 */
import { resolveConfig } from '../../../lib/config/resolve-config';
import { GatewayConfigError } from '../../../lib/errors/gateway-config-error';
import { corsOptions } from '../../../lib/http/cors-options';
import { useTempFiles } from '../support/temp-files';
import { thrown } from '../support/thrown';

const url = 'postgres://gateway@localhost:5432/app';
const { write } = useTempFiles('tablegate-cors-');
const fromFile = (line: string) => resolveConfig({ configFile: write('gw.toml', `[gateway]\ndatabase_url = "${url}"\n${line}\n`) }, {});
const errorOf = (line: string): GatewayConfigError => thrown(() => fromFile(line), GatewayConfigError);

test('is unset by default, and takes a list of origins', () => {
  expect(resolveConfig({ databaseUrl: url }, {}).corsOrigins).toBeUndefined();
  expect(fromFile('cors_origins = ["https://app.example.com", "http://localhost:5173"]').corsOrigins).toEqual(['https://app.example.com', 'http://localhost:5173']);
  expect(resolveConfig({ databaseUrl: url, corsOrigins: ['https://[::1]:8443'] }, {}).corsOrigins).toEqual(['https://[::1]:8443']);
});

test('refuses "*" and says to list the origins', () => {
  const err = errorOf('cors_origins = ["*"]');
  expect(err.message).toMatch(/^`cors_origins` in \[gateway\] of .*gw\.toml lists "\*", which is not an origin \(scheme:\/\/host\[:port\], no path\); list the origins of your browser apps instead/);
  expect(err.key).toBe('corsOrigins');
});

test.each([
  ['"https://app.example.com/"', 'write "https://app.example.com", as browsers send it'],
  ['"https://App.Example.com"', 'write "https://app.example.com", as browsers send it'],
  ['"https://app.example.com:443"', 'write "https://app.example.com", as browsers send it'],
  ['"https://app.example.com/spa"', 'write "https://app.example.com", as browsers send it'],
  ['"app.example.com"', 'write an http(s) origin such as "https://app.example.com"'],
  ['"file:///index.html"', 'write an http(s) origin such as "https://app.example.com"'],
  ['"https://user:pw@app.example.com"', 'write an http(s) origin such as "https://app.example.com"'],
])('refuses %s, which no browser sends: %s', (value, fix) => {
  expect(errorOf(`cors_origins = [${value}]`).message).toContain(fix);
});

test('refuses an empty list, a string and duplicates (schema errors)', () => {
  for (const line of ['cors_origins = []', 'cors_origins = "https://app.example.com"', 'cors_origins = ["https://a.example", "https://a.example"]']) {
    expect(errorOf(line).message).toContain('cors_origins');
  }
});

test('cors() options: the exact list, the gateway\'s headers, credentials only with jwt_cookie', () => {
  const config = resolveConfig({ databaseUrl: url, corsOrigins: ['https://app.example.com'] }, {});
  expect(corsOptions(config)).toMatchObject({ origin: ['https://app.example.com'], credentials: false, maxAge: 600 });
  expect(corsOptions(config).allowedHeaders).toEqual(expect.arrayContaining(['Authorization', 'Content-Type']));
  expect(corsOptions(config).allowedHeaders).not.toContain('x-user-id');
  expect(corsOptions(resolveConfig({ databaseUrl: url, corsOrigins: ['https://app.example.com'], jwtCookie: 'access_token' }, {})).credentials).toBe(true);
});
