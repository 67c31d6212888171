/**
 * createRemoteKeySet: transport and caching rules, against a local HTTP server (no database).
 * Key selection itself is jose's; the end-to-end behaviour (rotation, 503, cache refresh) is in
 * __tests__/integration/identity.test.ts.
 */
import { generateKeyPairSync } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRemoteKeySet, KeySetUnavailableError, maxKeySetBytes } from '../../../lib/stages/auth/remote-key-set';

const jwk = { ...generateKeyPairSync('ed25519').publicKey.export({ format: 'jwk' }), kid: 'k1', alg: 'EdDSA' };
let respond: (res: http.ServerResponse) => void = (res) => res.end(JSON.stringify({ keys: [jwk] }));
let hits = 0;
const server = http.createServer((_req, res) => {
  hits++;
  respond(res);
});
let url: URL;

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks`);
});
afterAll(() => new Promise((resolve) => server.close(resolve)));
beforeEach(() => {
  hits = 0;
  respond = (res) => res.end(JSON.stringify({ keys: [jwk] }));
});

const header = { alg: 'EdDSA', kid: 'k1' };
const token = { payload: '', signature: '' };

async function unavailable(promise: Promise<unknown>): Promise<string> {
  const err = await promise.then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(KeySetUnavailableError);
  return (err as Error).message;
}

describe('createRemoteKeySet', () => {
  it('fetches on first use and finds the key by kid', async () => {
    const set = createRemoteKeySet(url, { timeoutMs: 1000, cacheMs: 60_000, cooldownMs: 30_000 });
    expect(hits).toBe(0);
    const key = await set.resolve(header, token);
    expect((key as { asymmetricKeyType?: string }).asymmetricKeyType).toBe('ed25519');
    await set.resolve(header, token);
    expect(hits).toBe(1);
  });

  it('refuses a set larger than 1 MiB, a non-200 answer, a redirect and a body that is not a JWKS', async () => {
    const cases: ((res: http.ServerResponse) => void)[] = [
      (res) => res.end(JSON.stringify({ keys: [jwk], pad: 'x'.repeat(maxKeySetBytes) })),
      (res) => res.writeHead(404).end('{}'),
      (res) => res.writeHead(302, { location: 'http://127.0.0.1:1/elsewhere' }).end(),
      (res) => res.end('<html>not json</html>'),
      (res) => res.end('{"keys": "none"}'),
    ];
    for (const answer of cases) {
      respond = answer;
      const set = createRemoteKeySet(url, { timeoutMs: 1000, cacheMs: 60_000, cooldownMs: 0 });
      expect(await unavailable(set.resolve(header, token))).toMatch(/^JWKS unavailable: /);
    }
  });

  it('after a failed fetch, answers unavailable without fetching until the cooldown has passed', async () => {
    let clock = 1_000_000;
    const set = createRemoteKeySet(url, { timeoutMs: 1000, cacheMs: 60_000, cooldownMs: 30_000, now: () => clock });
    respond = (res) => res.writeHead(500).end();
    await unavailable(set.resolve(header, token));
    respond = (res) => res.end(JSON.stringify({ keys: [jwk] }));
    clock += 10_000;
    expect(await unavailable(set.resolve(header, token))).toMatch(/cooldown/);
    expect(hits).toBe(1);
    clock += 20_000;
    await set.resolve(header, token);
    expect(hits).toBe(2);
  });

  it('shares one fetch between concurrent first requests', async () => {
    const set = createRemoteKeySet(url, { timeoutMs: 1000, cacheMs: 60_000, cooldownMs: 30_000 });
    await Promise.all(Array.from({ length: 10 }, () => set.resolve(header, token)));
    expect(hits).toBe(1);
    expect(set.fetches()).toBe(1);
  });
});
