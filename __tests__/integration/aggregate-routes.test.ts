/**
 * GET /{table}/aggregate?fn=&column=&<filters> against real PostgreSQL as the RLS-bound app role.
 * Values are compared as raw response text with PostgreSQL's own rendering (admin SQL), so a
 * numeric that went through a JavaScript float would show up as a difference.
 */
import express from 'express';
import request from 'supertest';
import type { Gateway } from '../../lib';
import { createTestDatabase, TENANT_A } from '../support/test-database';
import { tokenA, tokenB, useGatewayApp } from '../support/gateway-app';

type TestDb = Awaited<ReturnType<typeof createTestDatabase>>;
let db: TestDb;
let gateway: Gateway;
let app: express.Express;

useGatewayApp({}, (started) => ({ db, gateway, app } = started));

const get = (path: string, token = tokenA) => request(app).get(path).set('Authorization', `Bearer ${token}`);

/** PostgreSQL's JSON text of an aggregate over tenant A's rows, computed as the admin. */
async function pgValue(expression: string, table: string, condition = 'true', tenant = TENANT_A): Promise<string> {
  const { rows } = await db.admin.query(`SELECT to_json(${expression})::text AS v FROM ${table} WHERE tenant_id = $1 AND (${condition})`, [tenant]);
  return rows[0].v as string;
}

describe('GET /{table}/aggregate', () => {
  it('counts the visible rows of the caller\'s tenant (column absent for count)', async () => {
    const a = await get('/api/orders/aggregate?fn=count');
    expect(a.status).toBe(200);
    expect(a.text).toBe('{"data":{"fn" : "count", "value" : 120}}');
    expect(a.body).toEqual({ data: { fn: 'count', value: 120 } });
    expect((await get('/api/orders/aggregate?fn=count', tokenB)).body.data.value).toBe(80);
  });

  it('sums numeric exactly, per tenant (fixture header: A 48548.47, B 35853.05)', async () => {
    const a = await get('/api/orders/aggregate?fn=sum&column=total');
    expect(a.status).toBe(200);
    expect(a.text).toBe('{"data":{"fn" : "sum", "column" : "total", "value" : 48548.47}}');
    expect((await get('/api/orders/aggregate?fn=sum&column=total', tokenB)).body.data).toEqual({ fn: 'sum', column: 'total', value: 35853.05 });
  });

  it('keeps every digit of avg (more than a double holds), as PostgreSQL renders it', async () => {
    const expected = await pgValue('avg(total)', 'orders');
    expect(expected.replace('.', '').length).toBeGreaterThan(17);
    const res = await get('/api/orders/aggregate?fn=avg&column=total');
    expect(res.text).toBe(`{"data":{"fn" : "avg", "column" : "total", "value" : ${expected}}}`);
  });

  it.each([
    ['min', 'total'],
    ['max', 'total'],
    ['min', 'placed_at'],
    ['max', 'status'],
    ['sum', 'qty'],
    ['avg', 'price'],
  ])('%s(%s) matches PostgreSQL, with filters in both spellings', async (fn, column) => {
    const table = column === 'qty' || column === 'price' ? 'order_items' : 'orders';
    const filter = table === 'orders' ? ['status=paid', "status = 'paid'"] : ['qty.gte=2', 'qty >= 2'];
    const expected = await pgValue(`${fn}(${column})`, table, filter[1]);
    const res = await get(`/api/${table}/aggregate?fn=${fn}&column=${column}&${filter[0]}`);
    expect(res.status).toBe(200);
    expect(res.text).toBe(`{"data":{"fn" : "${fn}", "column" : "${column}", "value" : ${expected}}}`);
  });

  it('gives null over no rows, except count which gives 0', async () => {
    const sum = await get('/api/orders/aggregate?fn=sum&column=total&status=nope');
    expect(sum.body).toEqual({ data: { fn: 'sum', column: 'total', value: null } });
    const count = await get('/api/orders/aggregate?fn=count&status=nope');
    expect(count.body).toEqual({ data: { fn: 'count', value: 0 } });
  });

  it('applies search', async () => {
    const res = await get('/api/documents/aggregate?fn=count&search=invoice');
    expect(res.body.data.value).toBe(2);
  });

  it.each([
    ['', 'PARSE_ERROR'],
    ['fn=median&column=total', 'PARSE_ERROR'],
    ['fn=SUM&column=total', 'PARSE_ERROR'],
    ['fn=sum', 'PARSE_ERROR'],
    ['fn=count&column=total', 'PARSE_ERROR'],
    ['fn=sum&column=status', 'PARSE_ERROR'],
    ['fn=avg&column=placed_at', 'PARSE_ERROR'],
    ['fn=sum&column=nope', 'UNKNOWN_COLUMN'],
    ['fn=sum&column=%22a%22%22b%22', 'UNKNOWN_COLUMN'],
    ['fn=sum&column=total&fn=sum', 'PARSE_ERROR'],
    ['fn=count&limit=5', 'PARSE_ERROR'],
    ['fn=count&nope=1', 'UNKNOWN_COLUMN'],
    ['fn=count&total=gt.abc', 'VALIDATION_ERROR'],
    ['fn=sum&column=total;DROP%20TABLE%20orders', 'UNKNOWN_COLUMN'],
  ])('?%s -> 400 %s', async (query, code) => {
    const res = await get(`/api/orders/aggregate?${query}`);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe(code);
  });

  it('min/max on a type without ordering is a 400, not a 500', async () => {
    const res = await get('/api/users/aggregate?fn=max&column=active');
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('PARSE_ERROR');
  });

  it('sums over the caller\'s tenant only, even when another tenant\'s rows match the filter', async () => {
    const all = await db.admin.query("SELECT count(*)::int AS n FROM orders WHERE status = 'paid'");
    const res = await get('/api/orders/aggregate?fn=count&status=paid');
    expect(res.body.data.value).toBe(44);
    expect(all.rows[0].n).toBeGreaterThan(44);
  });

  it('answers 405 to POST', async () => {
    expect((await request(app).post('/api/orders/aggregate').set('Authorization', `Bearer ${tokenA}`).send({})).status).toBe(405);
  });
});
