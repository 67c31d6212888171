/**
 * Issue 20's smaller items, over HTTP against real PostgreSQL, two tenants, RLS forced:
 * - rate-limit keys use the canonical form of UUID claims, and an upsert that can update counts
 *   against `update` as well as `insert` (docs/scaling-out.md#rate-limits);
 * - `request.headers` leaves out Proxy-Authorization, like Authorization and Cookie;
 * - a function's `RAISE SQLSTATE 'PGRST'` with a status that is no error status, or a hop-by-hop
 *   or framing header, is PGRST121 (502), never a response clients reject;
 * - a spread never yields duplicate keys: 400 naming the key (docs/postgrest-dialect.md).
 */
import { signToken, TENANT_A, TENANT_B } from '../support/test-database';
import { pgrstTokenA, pgrstTokenB, startPostgrestApp, type PostgrestApp } from '../support/postgrest-app';

let app: PostgrestApp;
let limited: PostgrestApp;

beforeAll(async () => {
  app = await startPostgrestApp();
  await app.db.admin.query(`
    CREATE FUNCTION pgrst.raise_status(s integer) RETURNS void LANGUAGE plpgsql AS $$
    BEGIN
      RAISE SQLSTATE 'PGRST' USING message = '{"code":"X1","message":"m"}', detail = json_build_object('status', s)::text;
    END $$;
    CREATE FUNCTION pgrst.raise_header(h text) RETURNS void LANGUAGE plpgsql AS $$
    BEGIN
      RAISE SQLSTATE 'PGRST' USING message = '{"code":"X2","message":"m"}', detail = json_build_object('status', 418, 'headers', json_build_object(h, 'chunked'))::text;
    END $$;
    GRANT EXECUTE ON FUNCTION pgrst.raise_status(integer), pgrst.raise_header(text) TO tablegate_app;`);
  await app.gateway.reloadSchema();
  limited = await startPostgrestApp({ rateLimit: { requests: 1, windowS: 600, store: 'memory' } }, app.db);
});

afterAll(async () => {
  await limited?.close();
  await app?.close();
});

const call = (base: PostgrestApp, method: string, path: string, token: string, body?: unknown, headers: Record<string, string> = {}) =>
  fetch(`${base.url}${path}`, { method, headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json', ...headers }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });

describe('rate limits', () => {
  it('the same tenant spelled another way (upper case, braces, no hyphens) shares one budget', async () => {
    const spellings = [TENANT_A, `{${TENANT_A.toUpperCase()}}`, TENANT_A.replace(/-/g, '')];
    const first = await call(limited, 'GET', '/authors?select=id', signToken({ tenant_id: spellings[0], user_id: 'alice', role: 'member' }));
    expect(first.status).toBe(200);
    for (const tenant of spellings) {
      const res = await call(limited, 'GET', '/authors?select=id', signToken({ tenant_id: tenant, user_id: 'alice', role: 'member' }));
      expect(res.status).toBe(429);
    }
    // Another tenant has its own budget.
    expect((await call(limited, 'GET', '/authors?select=id', signToken({ tenant_id: TENANT_B, user_id: 'alice', role: 'member' }))).status).toBe(200);
  });

  it('an upsert that can update counts against update: past its update limit, a caller cannot update through PUT or merge-duplicates', async () => {
    const token = signToken({ tenant_id: TENANT_A, user_id: 'upserter', role: 'member' });
    expect((await call(limited, 'PATCH', '/authors?id=eq.1', token, { born: '1815-12-10' })).status).toBe(204);
    const put = await call(limited, 'PUT', '/authors?id=eq.1', token, { id: 1, name: 'Ada' });
    expect(put.status).toBe(429);
    const merge = await call(limited, 'POST', '/authors?on_conflict=id', token, { id: 1, name: 'Ada' }, { Prefer: 'resolution=merge-duplicates' });
    expect(merge.status).toBe(429);
    // A tenant B caller with fresh budgets: the upsert is counted (insert and update) and runs.
    const other = signToken({ tenant_id: TENANT_B, user_id: 'upserter', role: 'member' });
    expect((await call(limited, 'PUT', '/authors?id=eq.11', other, { id: 11, name: 'Bob Author' })).status).toBe(204);
  });
});

it('request.headers leaves out Proxy-Authorization, Authorization and Cookie', async () => {
  for (const token of [pgrstTokenA, pgrstTokenB]) {
    const res = await call(app, 'GET', '/rpc/request_info', token, undefined, { 'Proxy-Authorization': 'Basic c2VjcmV0OnNlY3JldA==', Cookie: 'a=b', 'X-Kept': 'yes' });
    const info = (await res.json()) as { headers: Record<string, string> };
    expect(info.headers['x-kept']).toBe('yes');
    expect(Object.keys(info.headers)).not.toEqual(expect.arrayContaining(['proxy-authorization']));
    expect(JSON.stringify(info)).not.toContain('c2VjcmV0');
    expect(info.headers['cookie']).toBeUndefined();
  }
});

describe("a function's RAISE SQLSTATE 'PGRST'", () => {
  it.each([101, 200, 204, 304, 399, 600])('status %i: PGRST121, 502, with a body', async (status) => {
    const res = await call(app, 'GET', `/rpc/raise_status?s=${status}`, pgrstTokenA);
    expect(res.status).toBe(502);
    expect(((await res.json()) as { code: string }).code).toBe('PGRST121');
  });

  it('an error status still answers as the function asked', async () => {
    const res = await call(app, 'GET', '/rpc/raise_status?s=409', pgrstTokenB);
    expect(res.status).toBe(409);
  });

  it.each(['Transfer-Encoding', 'Content-Length', 'Connection', 'Keep-Alive', 'Upgrade', 'TE', 'Trailer', 'Proxy-Authenticate'])('header %s: PGRST121, 502, and the response is well framed', async (header) => {
    const res = await call(app, 'GET', `/rpc/raise_header?h=${header}`, pgrstTokenA);
    expect(res.status).toBe(502);
    expect(((await res.json()) as { code: string }).code).toBe('PGRST121');
    expect(res.headers.get('transfer-encoding') !== null && res.headers.get('content-length') !== null).toBe(false);
  });
});

describe('spreads', () => {
  it.each([pgrstTokenA, pgrstTokenB])('a key a spread adds twice is a 400 naming it; an alias resolves it', async (token) => {
    const res = await call(app, 'GET', '/books?select=id,...authors!author_id(*)', token);
    expect(res.status).toBe(400);
    const body = (await res.json()) as { code: string; message: string };
    expect(body.code).toBe('PGRST100');
    expect(body.message).toContain("'id'");
    const aliased = await call(app, 'GET', '/books?select=id,...authors!author_id(author:id,name)&order=id', token);
    expect(aliased.status).toBe(200);
    const rows = (await aliased.json()) as Record<string, unknown>[];
    expect(rows.length).toBeGreaterThan(0);
    for (const r of rows) expect(Object.keys(r).sort()).toEqual(['author', 'id', 'name']);
  });
});
