/**
 * PATCH /{table}/:id and DELETE /{table}/:id over HTTP against real PostgreSQL with RLS forced:
 * 404 for an invisible row (another tenant's row stays untouched, checked with the admin pool),
 * composite keys, returning, and errors that leave the row as it was.
 */
import express from 'express';
import request from 'supertest';
import type { Gateway } from '../../lib';
import { createTestDatabase, TENANT_A, TENANT_B } from '../support/test-database';
import { tokenA, tokenB, useGatewayApp } from '../support/gateway-app';

type TestDb = Awaited<ReturnType<typeof createTestDatabase>>;
let db: TestDb;
let gateway: Gateway;
let app: express.Express;

useGatewayApp({}, (started) => ({ db, gateway, app } = started));

const patch = (path: string, body: unknown, token = tokenA) =>
  request(app).patch(path).set('Authorization', `Bearer ${token}`).set('Content-Type', 'application/json').send(typeof body === 'string' ? body : JSON.stringify(body));
const del = (path: string, token = tokenA) => request(app).delete(path).set('Authorization', `Bearer ${token}`);

async function adminRows(sql: string, params: unknown[] = []): Promise<Record<string, unknown>[]> {
  return (await db.admin.query(sql, params)).rows;
}
/** A tenant's user id, by the fixture layout (A 1-14, B 15-28). */
const userOf = { A: 1, B: 15 } as const;

describe('PATCH /{table}/:id', () => {
  it('changes only the given columns and answers 200 {"data":row} with every column', async () => {
    const before = (await adminRows('SELECT email, active FROM users WHERE id = $1', [userOf.A]))[0]!;
    const res = await patch(`/api/users/${userOf.A}`, { name: 'Renamed A' });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ id: userOf.A, name: 'Renamed A', email: before.email, active: before.active });
    expect(await adminRows('SELECT name, email FROM users WHERE id = $1', [userOf.A])).toEqual([{ name: 'Renamed A', email: before.email }]);
  });

  it('returns only the returning columns', async () => {
    const res = await patch(`/api/users/${userOf.A}?returning=id,bio`, { bio: 'new bio', tags: ['x', 'y'] });
    expect(res.body).toEqual({ data: { id: userOf.A, bio: 'new bio' } });
    expect(await adminRows('SELECT tags FROM users WHERE id = $1', [userOf.A])).toEqual([{ tags: ['x', 'y'] }]);
  });

  it("is 404 for another tenant's row and leaves that row untouched", async () => {
    const before = await adminRows('SELECT * FROM users WHERE id = $1', [userOf.B]);
    const res = await patch(`/api/users/${userOf.B}`, { name: 'hijacked' });
    expect(res.status).toBe(404);
    expect(res.body.code).toBe('NOT_FOUND');
    expect(await adminRows('SELECT * FROM users WHERE id = $1', [userOf.B])).toEqual(before);
  });

  it('is 403 when the change would move the row to another tenant (WITH CHECK), and the row is unchanged', async () => {
    const res = await patch(`/api/users/${userOf.A}`, { tenant_id: TENANT_B });
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('FORBIDDEN');
    expect(await adminRows('SELECT tenant_id FROM users WHERE id = $1', [userOf.A])).toEqual([{ tenant_id: TENANT_A }]);
  });

  it('updates a row by a composite key', async () => {
    const [tag] = await adminRows('SELECT order_id, tag FROM order_tags WHERE tenant_id = $1 ORDER BY order_id, tag LIMIT 1', [TENANT_A]);
    const res = await patch(`/api/order_tags/${tag!.order_id},${tag!.tag}?returning=tag`, { tag: 'renamed' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: { tag: 'renamed' } });
    expect(await adminRows('SELECT 1 FROM order_tags WHERE order_id = $1 AND tag = $2', [tag!.order_id, 'renamed'])).toHaveLength(1);
  });

  it('refuses an empty object, an array, unknown and generated columns with 400', async () => {
    const cases: [unknown, string][] = [[{}, 'PARSE_ERROR'], [[{ name: 'x' }], 'PARSE_ERROR'], [{ nmae: 'x' }, 'UNKNOWN_COLUMN']];
    for (const [body, code] of cases) {
      const res = await patch(`/api/users/${userOf.A}`, body);
      expect([res.status, res.body.code]).toEqual([400, code]);
    }
    const generated = await patch('/api/write_items/1', { qty_doubled: 4 });
    expect([generated.status, generated.body.code]).toEqual([400, 'VALIDATION_ERROR']);
  });

  it('maps check, not-null, unique and bad-literal failures to 400/409 and leaves the row as it was', async () => {
    const before = await adminRows('SELECT * FROM orders WHERE id = 1');
    const cases: [unknown, number, string][] = [
      [{ status: 'lost' }, 400, '23514'],
      [{ placed_at: null }, 400, '23502'],
      [{ total: 'lots' }, 400, '22P02'],
      [{ user_id: 999999 }, 409, '23503'],
    ];
    for (const [body, status, sqlstate] of cases) {
      const res = await patch('/api/orders/1', body);
      expect([res.status, res.body.details?.sqlstate]).toEqual([status, sqlstate]);
    }
    const dup = await patch(`/api/users/${userOf.A}`, { email: (await adminRows('SELECT email FROM users WHERE id = 2'))[0]!.email });
    expect([dup.status, dup.body.code]).toEqual([409, 'CONFLICT']);
    expect(await adminRows('SELECT * FROM orders WHERE id = 1')).toEqual(before);
  });

  it('keeps a bigint above 2^53 and a numeric(30,10) exact', async () => {
    const res = await patch('/api/write_items/1?returning=big,amount', '{"big":-9223372036854775808,"amount":-98765432109876543210.9876543210}');
    expect(res.status).toBe(200);
    expect(res.text).toBe('{"data":{"big":-9223372036854775808,"amount":-98765432109876543210.9876543210}}');
    expect(await adminRows('SELECT big::text, amount::text FROM write_items WHERE id = 1')).toEqual([{ big: '-9223372036854775808', amount: '-98765432109876543210.9876543210' }]);
  });

  it('is 400 for a key that is not a valid literal of the key type', async () => {
    const res = await patch('/api/users/abc', { name: 'x' });
    expect(res.status).toBe(400);
  });
});

describe('DELETE /{table}/:id', () => {
  it('deletes the row and answers 204 without a body', async () => {
    const res = await del('/api/shipments/1');
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    expect(await adminRows('SELECT 1 FROM shipments WHERE id = 1')).toEqual([]);
  });

  it('answers 200 {"data":row} with returning', async () => {
    const res = await del('/api/shipments/2?returning=id,carrier');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: { id: 2, carrier: expect.any(String) } });
    expect(await adminRows('SELECT 1 FROM shipments WHERE id = 2')).toEqual([]);
  });

  it("is 404 for another tenant's row, which stays", async () => {
    const res = await del('/api/shipments/9');
    expect(res.status).toBe(404);
    expect(await adminRows('SELECT tenant_id FROM shipments WHERE id = 9')).toEqual([{ tenant_id: TENANT_B }]);
    const own = await del('/api/shipments/9?returning=id', tokenB);
    expect(own.status).toBe(200);
  });

  it('is 404 for a key that does not exist', async () => {
    expect((await del('/api/shipments/424242')).status).toBe(404);
  });

  it('deletes by a composite key', async () => {
    const [tag] = await adminRows('SELECT order_id, tag FROM order_tags WHERE tenant_id = $1 ORDER BY order_id DESC, tag LIMIT 1', [TENANT_A]);
    const res = await del(`/api/order_tags/${tag!.order_id},${tag!.tag}`);
    expect(res.status).toBe(204);
    expect(await adminRows('SELECT 1 FROM order_tags WHERE order_id = $1 AND tag = $2', [tag!.order_id, tag!.tag])).toEqual([]);
  });

  it('maps a foreign-key violation to 409 and keeps the row', async () => {
    const res = await del(`/api/users/${userOf.A}`);
    expect(res.status).toBe(409);
    expect(res.body.details.sqlstate).toBe('23503');
    expect(await adminRows('SELECT 1 FROM users WHERE id = $1', [userOf.A])).toHaveLength(1);
  });

  it('refuses query parameters other than returning', async () => {
    const res = await del('/api/shipments/3?select=id');
    expect([res.status, res.body.code]).toEqual([400, 'PARSE_ERROR']);
    expect(await adminRows('SELECT 1 FROM shipments WHERE id = 3')).toHaveLength(1);
  });
});

describe('writes to relations that are not writable', () => {
  it('answers 405 (never 500) for a view PostgreSQL cannot update', async () => {
    const res = await request(app).post('/api/session_context').set('Authorization', `Bearer ${tokenA}`).set('Content-Type', 'application/json').send('{"tenant_id":"x"}');
    expect([res.status, res.body.code, res.body.details?.sqlstate]).toEqual([405, 'METHOD_NOT_ALLOWED', '55000']);
  });
});
