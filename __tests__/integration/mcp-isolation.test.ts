/**
 * The tenant isolation matrix through the agents' door (docs/mcp.md): for every ordered pair
 * (caller, victim) of the fixture tenants A, B and C, every tool on every fixture table, aimed at
 * the victim's ids and keys, with the official SDK's Client over Streamable HTTP against a gateway
 * with writes on, as tablegate_app (no BYPASSRLS) with RLS forced.
 *
 * What it proves: nothing of the victim is returned or counted, and nothing of the victim changes.
 * - query_rows and aggregate with the victim's tenant id, ids and keys as filters: no row, count 0;
 *   without filters: exactly the rows (and the count) db.admin computes for the caller alone, and
 *   exactly what the REST route returns to the same token.
 * - get_row, update_row and delete_row on the victim's keys: NOT_FOUND, and the victim's rows are
 *   byte-identical before and after (db.admin snapshots); insert_rows naming the victim's tenant:
 *   refused, nothing written.
 * - call_function with the victim's ids: answers as for the caller alone.
 * - No answer's text holds the victim's tenant id unless the request carried it.
 * Neither side can pass by being empty: db.admin confirms the victim has rows the attack designates,
 * and the caller's own unfiltered read returns its rows. The last test checks the matrix ran.
 */
import express from 'express';
import request from 'supertest';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { createGateway, type Gateway } from '../../lib';
import { createTestDatabase, FIXTURE_ROWS, signToken, TENANT_A, TENANT_B, TENANT_C, TEST_JWT_SECRET, type TestDatabase } from '../support/test-database';
import { bearer, callTool, connect, listen, type Listening, type ToolAnswer } from '../support/mcp-client';

type Tenant = 'A' | 'B' | 'C';
const UUID: Readonly<Record<Tenant, string>> = { A: TENANT_A, B: TENANT_B, C: TENANT_C };
const TENANTS = Object.keys(UUID) as Tenant[];
const PAIRS: [Tenant, Tenant][] = TENANTS.flatMap((caller) => TENANTS.filter((v) => v !== caller).map((victim): [Tenant, Tenant] => [caller, victim]));
const TABLES = Object.keys(FIXTURE_ROWS) as (keyof typeof FIXTURE_ROWS)[];
/** The column that holds a row's tenant: `tenants` is keyed by it. */
const tenantColumn = (table: string): string => (table === 'tenants' ? 'id' : 'tenant_id');
const quote = (name: string): string => `"${name.replace(/"/g, '""')}"`;
const TOOLS = ['query_rows', 'aggregate', 'get_row', 'update_row', 'delete_row', 'insert_rows'] as const;
/** 6 pairs x 10 tables x 6 tools, plus the function calls (354 when written); an emptied matrix fails the last test. */
const FLOOR = 340;

let db: TestDatabase;
let gateway: Gateway;
let listening: Listening;
let app: express.Express;
const clients = new Map<Tenant, Client>();
const tokens = new Map<Tenant, string>();
let ran = 0;

beforeAll(async () => {
  db = await createTestDatabase();
  gateway = createGateway({ databaseUrl: db.appUrl, jwtSecret: TEST_JWT_SECRET, mcp: { enabled: true, writes: true, maxRows: 1000 }, maxLimit: 1000 });
  await gateway.ready;
  app = express().use('/api', gateway).use('/mcp', gateway.mcp);
  listening = await listen(app);
  for (const t of TENANTS) {
    const token = signToken({ tenant_id: UUID[t], user_id: `user-${t}`, role: 'member', agent_id: `agent-${t}` });
    tokens.set(t, token);
    clients.set(t, await connect(`${listening.url}/mcp`, bearer(token)));
  }
});

afterAll(async () => {
  await Promise.all([...clients.values()].map((c) => c.close().catch(() => undefined)));
  await listening?.close();
  await gateway?.close();
  await db?.drop();
});

/** The victim's rows of a table, as db.admin (bypassing RLS) reads them: one text per row, sorted. */
async function snapshot(table: string, victim: Tenant): Promise<string[]> {
  const { rows } = await db.admin.query<{ row: string }>(`SELECT to_jsonb(t)::text AS row FROM ${quote(table)} t WHERE ${quote(tenantColumn(table))} = $1 ORDER BY 1`, [UUID[victim]]);
  return rows.map((r) => r.row);
}

/** The primary-key columns of a table, from the catalog. */
async function keyColumns(table: string): Promise<string[]> {
  const { rows } = await db.admin.query<{ name: string }>(
    `SELECT a.attname AS name FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)
      WHERE i.indrelid = $1::regclass AND i.indisprimary ORDER BY array_position(i.indkey, a.attnum)`,
    [quote(table)],
  );
  return rows.map((r) => r.name);
}

/** Up to three of the victim's keys, as get_row takes them (a value, or an object for a composite key). */
async function victimKeys(table: string, victim: Tenant): Promise<unknown[]> {
  const columns = await keyColumns(table);
  if (columns.length === 0) return [];
  const { rows } = await db.admin.query<Record<string, unknown>>(`SELECT ${columns.map(quote).join(', ')} FROM ${quote(table)} WHERE ${quote(tenantColumn(table))} = $1 ORDER BY 1 LIMIT 3`, [UUID[victim]]);
  return rows.map((r) => (columns.length === 1 ? String(r[columns[0]!]) : Object.fromEntries(columns.map((c) => [c, String(r[c])]))));
}

/** No answer of the attack may name the victim's tenant unless the request carried it. */
function expectNoVictim(answer: ToolAnswer, victim: Tenant, carried: boolean): void {
  if (!carried) expect(answer.text).not.toContain(UUID[victim]);
}

describe.each(PAIRS)('caller %s, victim %s', (caller, victim) => {
  const call = (tool: string, args: Record<string, unknown>) => callTool(clients.get(caller)!, tool, args);

  describe.each(TABLES)('table %s', (table) => {
    const column = tenantColumn(table);

    it('query_rows: the victim is never returned; unfiltered, exactly the caller rows and what REST returns', async () => {
      const victimRows = await snapshot(table, victim);
      expect(victimRows.length).toBe(FIXTURE_ROWS[table][victim]);
      const byTenant = await call('query_rows', { table, filters: [{ column, op: 'eq', value: UUID[victim] }], limit: 1000 });
      expect(byTenant).toMatchObject({ ok: true, data: { rows: [] } });
      const keys = await victimKeys(table, victim);
      for (const key of keys) {
        const filters = typeof key === 'object' ? Object.entries(key as Record<string, string>).map(([c, v]) => ({ column: c, op: 'eq', value: v })) : [{ column: (await keyColumns(table))[0], op: 'eq', value: key }];
        const answer = await call('query_rows', { table, filters });
        expect(answer).toMatchObject({ ok: true, data: { rows: [] } });
        expectNoVictim(answer, victim, false);
      }
      const own = await call('query_rows', { table, limit: 1000 });
      if (!own.ok) throw new Error(own.code);
      const rows = own.data['rows'] as Record<string, unknown>[];
      expect(rows.length).toBe(FIXTURE_ROWS[table][caller]);
      expect(rows.every((r) => r[column] === UUID[caller])).toBe(true);
      expectNoVictim(own, victim, false);
      const rest = await request(app).get(`/api/${encodeURIComponent(table)}?limit=1000`).set('Authorization', `Bearer ${tokens.get(caller)}`);
      expect(rows).toEqual(rest.body.data);
      ran++;
    });

    it('aggregate: the victim is never counted', async () => {
      const byTenant = await call('aggregate', { table, fn: 'count', filters: [{ column, op: 'eq', value: UUID[victim] }] });
      expect(byTenant).toMatchObject({ ok: true, data: { value: 0 } });
      const all = await call('aggregate', { table, fn: 'count' });
      expect(all).toMatchObject({ ok: true, data: { value: FIXTURE_ROWS[table][caller] } });
      ran++;
    });

    it("get_row, update_row, delete_row on the victim's keys: NOT_FOUND, the victim unchanged", async () => {
      const keys = await victimKeys(table, victim);
      const before = await snapshot(table, victim);
      if ((await keyColumns(table)).length === 0) {
        // No primary key (audit_log): the key tools are not offered for it at all.
        for (const tool of ['get_row', 'update_row', 'delete_row']) expect(await call(tool, { table, key: 1, ...(tool === 'update_row' ? { values: { [column]: UUID[caller] } } : {}) })).toMatchObject({ ok: false });
      } else {
        // C has no shipments and no rows of the weird table: nothing to aim at there.
        expect(keys.length).toBe(Math.min(3, FIXTURE_ROWS[table][victim]));
      }
      for (const key of keys) {
        for (const [tool, extra] of [['get_row', {}], ['update_row', { values: { [column]: UUID[caller] } }], ['delete_row', {}]] as const) {
          const answer = await call(tool, { table, key, ...extra });
          expect(answer).toMatchObject({ ok: false, code: 'NOT_FOUND' });
          expectNoVictim(answer, victim, false);
        }
      }
      expect(await snapshot(table, victim)).toEqual(before);
      ran += 3;
    });

    it("insert_rows naming the victim's tenant: refused, nothing written", async () => {
      const before = await snapshot(table, victim);
      const answer = await call('insert_rows', { table, rows: [{ [column]: UUID[victim] }] });
      expect(answer.ok).toBe(false);
      expect(await snapshot(table, victim)).toEqual(before);
      ran++;
    });
  });

  it("call_function with the victim's ids answers as for the caller alone", async () => {
    const { rows: users } = await db.admin.query<{ id: number }>(`SELECT id FROM users WHERE tenant_id = $1 ORDER BY id LIMIT 2`, [UUID[victim]]);
    const { rows: orders } = await db.admin.query<{ id: string }>(`SELECT id FROM orders WHERE tenant_id = $1 ORDER BY id LIMIT 2`, [UUID[victim]]);
    expect(users.length + orders.length).toBeGreaterThan(0);
    for (const { id } of users) {
      const answer = await call('call_function', { name: 'public.orders_of_user', args: { p_user_id: id } });
      expect(answer).toMatchObject({ ok: true, data: { result: [] } });
      expectNoVictim(answer, victim, false);
    }
    for (const { id } of orders) {
      expect(await call('call_function', { name: 'public.order_total', args: { p_order_id: Number(id) } })).toMatchObject({ ok: true, data: { result: null } });
      const before = await snapshot('orders', victim);
      const written = await call('call_function', { name: 'public.set_order_notes', args: { p_order_id: Number(id), p_notes: 'by an agent of another tenant' } });
      expect(written).toMatchObject({ ok: true, data: { result: [] } });
      expect(await snapshot('orders', victim)).toEqual(before);
    }
    expect(await call('call_function', { name: 'public.current_tenant' })).toMatchObject({ ok: true, data: { result: UUID[caller] } });
    ran++;
  });
});

it('ran the whole matrix', () => {
  expect(ran).toBeGreaterThanOrEqual(FLOOR);
});
