/**
 * `rate_limit` with the memory store and a host store, over HTTP against the real database
 * (docs/scaling-out.md#rate-limits): the request after the last allowed one in a window is 429
 * RATE_LIMITED with RateLimit-* and Retry-After; callers (tenant and user, or IP) and route kinds
 * are counted apart; the window resets; a refused request runs no SQL; off by default.
 */
import express from 'express';
import { MemoryStore } from 'express-rate-limit';
import type { Store } from 'express-rate-limit';
import request from 'supertest';
import { createGateway } from '../../lib';
import type { GatewayOptions } from '../../lib';
import { gatewayFactory } from '../support/gateway-app';
import { createTestDatabase, signToken, TENANT_A, TENANT_B, TEST_JWT_SECRET, type TestDatabase } from '../support/test-database';

let db: TestDatabase;
const gateways = gatewayFactory(() => ({ databaseUrl: db.appUrl, jwtSecret: TEST_JWT_SECRET }));

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await gateways.closeAll();
  await db?.drop();
});

const bearer = (tenant: string, user: string): string => `Bearer ${signToken({ tenant_id: tenant, user_id: user, role: 'member' })}`;
const limited = (requests: number, windowS: number, extra: Partial<GatewayOptions> = {}) => gateways.appWith({ rateLimit: { requests, windowS, store: 'memory' }, ...extra });

describe('memory store', () => {
  it('answers the request after the last allowed one with 429 RATE_LIMITED, RateLimit-* and Retry-After', async () => {
    const app = await limited(3, 60);
    const auth = bearer(TENANT_A, 'limit-1');
    const remaining: string[] = [];
    for (let i = 0; i < 3; i++) {
      const ok = await request(app).get('/api/orders?limit=1').set('Authorization', auth);
      expect(ok.status).toBe(200);
      expect(ok.headers['ratelimit-limit']).toBe('3');
      expect(ok.headers['ratelimit-policy']).toBe('3;w=60');
      expect(ok.headers['retry-after']).toBeUndefined();
      remaining.push(String(ok.headers['ratelimit-remaining']));
    }
    expect(remaining).toEqual(['2', '1', '0']);

    const refused = await request(app).get('/api/orders?limit=1').set('Authorization', auth);
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ code: 'RATE_LIMITED', details: { limit: 3, window_s: 60 } });
    expect(refused.body.message).toBe('Too many requests: at most 3 per 60 s for this caller and route kind.');
    expect(refused.headers['content-type']).toMatch(/^application\/json/);
    expect(refused.headers['ratelimit-limit']).toBe('3');
    expect(refused.headers['ratelimit-remaining']).toBe('0');
    const retryAfter = Number(refused.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(59);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(refused.headers['ratelimit-reset']).toBe(refused.headers['retry-after']);
    expect(refused.body.hint).toBe(`Retry in ${retryAfter} s.`);
    expect(refused.headers['x-request-id']).toBeDefined();
    // Still refused: the window has not moved.
    expect((await request(app).get('/api/orders?limit=1').set('Authorization', auth)).status).toBe(429);
  });

  it('counts tenants, users and route kinds apart', async () => {
    const app = await limited(1, 60);
    const alice = bearer(TENANT_A, 'alice');
    expect((await request(app).get('/api/orders?limit=1').set('Authorization', alice)).status).toBe(200);
    expect((await request(app).get('/api/orders?limit=1').set('Authorization', alice)).status).toBe(429);
    // Same user name, other tenant; other user, same tenant; same caller, other route kinds.
    expect((await request(app).get('/api/orders?limit=1').set('Authorization', bearer(TENANT_B, 'alice'))).status).toBe(200);
    expect((await request(app).get('/api/orders?limit=1').set('Authorization', bearer(TENANT_A, 'carol'))).status).toBe(200);
    expect((await request(app).get('/api/orders/1').set('Authorization', alice)).status).not.toBe(429);
    expect((await request(app).get('/api/orders/aggregate?fn=count').set('Authorization', alice)).status).toBe(200);
    expect((await request(app).get('/api/orders/aggregate?fn=count').set('Authorization', alice)).status).toBe(429);
  });

  it('keeps a `:` in a claim from forging another caller\'s key', async () => {
    const app = await limited(1, 60);
    // Unescaped, both would be `t:x:u:y:u:z:list`.
    for (const [tenant, user] of [['x:u:y', 'z'], ['x', 'y:u:z']] as const) {
      // session_context reads settings only: a tenant that is no uuid is fine there.
      const res = await request(app).get('/api/session_context').set('Authorization', bearer(tenant, user));
      expect([res.status, res.headers['ratelimit-remaining']]).toEqual([200, '0']);
    }
  });

  it('counts anonymous callers by IP address (req.ip, as the host app\'s trust proxy decides), IPv6 per /56', async () => {
    const gateway = gateways.track(createGateway({ databaseUrl: db.appUrl, jwtSecret: TEST_JWT_SECRET, requireAuth: false, rateLimit: { requests: 1, windowS: 60, store: 'memory' } }));
    await gateway.ready;
    const app = express().set('trust proxy', 'loopback').use('/api', gateway);
    const from = (ip: string) => request(app).get('/api/tenants').set('X-Forwarded-For', ip);
    expect((await from('203.0.113.1')).status).toBe(200);
    expect((await from('203.0.113.1')).status).toBe(429);
    expect((await from('203.0.113.2')).status).toBe(200);
    expect((await from('2001:db8:0:1::1')).status).toBe(200);
    expect((await from('2001:db8:0:2::1')).status).toBe(429); // same /56
    expect((await from('2001:db8:1:0::1')).status).toBe(200); // another /56
    // Anything that is not an address shares one key instead of entering it.
    expect((await from('not-an-ip')).status).toBe(200);
    expect((await from('also not an ip')).status).toBe(429);
  });

  it('lets the caller in again once the window has reset', async () => {
    const app = await limited(1, 1);
    const auth = bearer(TENANT_A, 'window');
    expect((await request(app).get('/api/tenants').set('Authorization', auth)).status).toBe(200);
    const refused = await request(app).get('/api/tenants').set('Authorization', auth);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(1);
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const again = await request(app).get('/api/tenants').set('Authorization', auth);
    expect(again.status).toBe(200);
    expect(again.headers['ratelimit-remaining']).toBe('0');
  });

  it('refuses before any SQL runs: a limited insert writes nothing', async () => {
    const app = await limited(2, 60);
    const auth = bearer(TENANT_A, 'writer');
    const insert = (sku: string) => request(app).post('/api/write_items').set('Authorization', auth).send({ sku, name: 'rate limited' });
    expect((await insert('rl-1')).status).toBe(201);
    expect((await insert('rl-2')).status).toBe(201);
    expect((await insert('rl-3')).status).toBe(429);
    const { rows } = await db.admin.query<{ sku: string }>("SELECT sku FROM write_items WHERE sku LIKE 'rl-%' ORDER BY sku");
    expect(rows.map((r) => r.sku)).toEqual(['rl-1', 'rl-2']);
  });

  it('does not count a request refused by auth or parse (401, unknown table)', async () => {
    const app = await limited(1, 60);
    const auth = bearer(TENANT_A, 'not-counted');
    expect((await request(app).get('/api/orders?limit=1')).status).toBe(401);
    const unknown = await request(app).get('/api/no_such_table').set('Authorization', auth);
    expect(unknown.status).toBe(404);
    expect(unknown.headers['ratelimit-limit']).toBeUndefined();
    const first = await request(app).get('/api/orders?limit=1').set('Authorization', auth);
    expect([first.status, first.headers['ratelimit-remaining']]).toEqual([200, '0']);
  });
});

describe('a host store', () => {
  it('is the one that counts: its increment sees every admitted request under the caller key', async () => {
    const inner = new MemoryStore();
    const calls: string[] = [];
    const store: Store = {
      init: (options) => inner.init(options),
      increment: (key) => {
        calls.push(key);
        return inner.increment(key);
      },
      decrement: (key) => inner.decrement(key),
      resetKey: (key) => inner.resetKey(key),
      shutdown: () => inner.shutdown(),
    };
    const app = await gateways.appWith({ rateLimit: { requests: 2, windowS: 60, store } });
    const auth = bearer(TENANT_B, 'host-store');
    expect((await request(app).get('/api/orders?limit=1').set('Authorization', auth)).status).toBe(200);
    expect((await request(app).get('/api/orders/1').set('Authorization', auth)).status).not.toBe(429);
    expect((await request(app).get('/api/orders?limit=1').set('Authorization', auth)).status).toBe(200);
    expect((await request(app).get('/api/orders?limit=1').set('Authorization', auth)).status).toBe(429);
    expect(calls).toEqual([`t:${TENANT_B}:u:host-store:list`, `t:${TENANT_B}:u:host-store:get`, `t:${TENANT_B}:u:host-store:list`, `t:${TENANT_B}:u:host-store:list`]);
    inner.shutdown();
  });

  it('failing, refuses the request with 503 and Retry-After instead of letting it through', async () => {
    const store: Store = {
      increment: () => Promise.reject(new Error('store is down')),
      decrement: () => undefined,
      resetKey: () => undefined,
    };
    const errors = jest.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      const app = await gateways.appWith({ rateLimit: { requests: 2, windowS: 60, store } });
      const res = await request(app).get('/api/orders?limit=1').set('Authorization', bearer(TENANT_A, 'store-down'));
      expect(res.status).toBe(503);
      expect(res.body.code).toBe('SERVICE_UNAVAILABLE');
      expect(res.headers['retry-after']).toBe('1');
      expect(JSON.stringify(res.body)).not.toContain('store is down');
      expect(errors.mock.calls.map((c) => String(c[0]))).toContainEqual(expect.stringMatching(/rate-limit store failed \(store is down\)/));
    } finally {
      errors.mockRestore();
    }
  });
});

describe('off by default', () => {
  it('sends no RateLimit-* header and never answers 429', async () => {
    const app = await gateways.appWith();
    const auth = bearer(TENANT_A, 'unlimited');
    for (let i = 0; i < 5; i++) {
      const res = await request(app).get('/api/orders?limit=1').set('Authorization', auth);
      expect(res.status).toBe(200);
      expect(Object.keys(res.headers).filter((h) => h.startsWith('ratelimit') || h === 'retry-after')).toEqual([]);
    }
  });
});
