/**
 * `Prefer: count=planned` and `count=estimated` of the PostgREST dialect come from the planner's
 * estimate of the caller's own statement, under its row-level security, never from the table's
 * whole-table statistics (docs/security.md, "Counts and estimates"): tenant A's estimate of a
 * table where tenant B holds many more rows is A's, and it does not move when B adds rows and the
 * table is analysed. The 416 message repeats that number, not the table's.
 */
import type { PostgrestApp } from '../support/postgrest-app';
import { pgrstTokenA, pgrstTokenB, usePostgrestApp } from '../support/postgrest-app';
import { TENANT_A, TENANT_B } from '../support/test-database';

let app: PostgrestApp;
usePostgrestApp({}, (a) => (app = a));

const get = (path: string, token: string, prefer: string, extra: Record<string, string> = {}): Promise<Response> =>
  fetch(`${app.url}${path}`, { headers: { Authorization: `Bearer ${token}`, Prefer: prefer, ...extra } });

const totalOf = (res: Response): string => res.headers.get('content-range')!.split('/')[1]!;

async function own(tenant: string): Promise<number> {
  const { rows } = await app.db.admin.query<{ n: number }>('SELECT count(*)::int AS n FROM pgrst.events WHERE tenant_id = $1', [tenant]);
  return rows[0]!.n;
}

beforeAll(async () => {
  // Tenant A: 20 more events (22 in all); tenant B: 500 more (501).
  await app.db.admin.query(`INSERT INTO pgrst.events (id, tenant_id, name) SELECT g, $1, 'a' || g FROM generate_series(100, 119) AS g`, [TENANT_A]);
  await app.db.admin.query(`INSERT INTO pgrst.events (id, tenant_id, name) SELECT g, $1, 'b' || g FROM generate_series(1000, 1499) AS g`, [TENANT_B]);
  await app.db.admin.query('ANALYZE pgrst.events');
});

it.each(['planned', 'estimated'])('count=%s: each tenant sees the estimate of its own rows, not the table\'s', async (mode) => {
  const a = await own(TENANT_A);
  const b = await own(TENANT_B);
  expect(a).toBe(22);
  for (const [token, n] of [[pgrstTokenA, a], [pgrstTokenB, b]] as const) {
    const res = await get('/events?select=id&limit=5', token, `count=${mode}`);
    expect(res.status).toBe(206);
    // The planner's estimate of `tenant_id = <the caller's tenant>` from the analysed table.
    expect(Number(totalOf(res))).toBe(n);
  }
  // A filter is part of the statement estimated.
  const filtered = await get('/events?select=id&id=lt.100', pgrstTokenA, `count=${mode}`);
  expect(Number(totalOf(filtered))).toBeLessThan(a);
});

it('count=planned: tenant B adding rows does not move tenant A\'s estimate', async () => {
  const before = totalOf(await get('/events?select=id&limit=1', pgrstTokenA, 'count=planned'));
  await app.db.admin.query(`INSERT INTO pgrst.events (id, tenant_id, name) SELECT g, $1, 'b' || g FROM generate_series(2000, 2499) AS g`, [TENANT_B]);
  await app.db.admin.query('ANALYZE pgrst.events');
  const after = totalOf(await get('/events?select=id&limit=1', pgrstTokenA, 'count=planned'));
  expect(after).toBe(before);
  expect(Number(totalOf(await get('/events?select=id&limit=1', pgrstTokenB, 'count=planned')))).toBe(await own(TENANT_B));
});

it('the 416 message names the caller\'s estimate, not the table\'s', async () => {
  const res = await get('/events?select=id&offset=900', pgrstTokenA, 'count=planned');
  expect(res.status).toBe(416);
  const body = (await res.json()) as { details: string };
  expect(body.details).toBe('An offset of 900 was requested, but there are only 22 rows.');
  expect(res.headers.get('content-range')).toBe('*/22');
});

it('count=estimated above the page limit and below max_limit: the exact count', async () => {
  const res = await get('/events?select=id&limit=10', pgrstTokenB, 'count=estimated');
  expect(Number(totalOf(res))).toBe(await own(TENANT_B));
});

describe('rows the statistics do not know yet (inserted, not analysed)', () => {
  beforeAll(async () => {
    await app.db.admin.query(`INSERT INTO pgrst.events (id, tenant_id, name) SELECT g, $1, 'a' || g FROM generate_series(3000, 3029) AS g`, [TENANT_A]);
  });
  afterAll(async () => {
    await app.db.admin.query('DELETE FROM pgrst.events WHERE id BETWEEN 3000 AND 3029');
  });

  it('count=planned is the planner\'s number as it is, even below the page (PostgREST does not raise it)', async () => {
    expect(await own(TENANT_A)).toBe(52);
    const res = await get('/events?select=id&order=id&limit=40', pgrstTokenA, 'count=planned');
    const planned = Number(totalOf(res));
    expect(planned).toBeLessThan(40);
    expect([res.status, res.headers.get('content-range')]).toEqual([200, `0-39/${planned}`]);
  });

  it('count=estimated is exact up to max_limit, whatever the page limit (PostgREST: db-max-rows)', async () => {
    const res = await get('/events?select=id&limit=5', pgrstTokenA, 'count=estimated');
    expect([res.status, totalOf(res)]).toEqual([206, '52']);
  });
});
