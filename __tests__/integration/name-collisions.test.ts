/**
 * Correct answers whatever the names: every route over HTTP against the `collide` schema of
 * __tests__/fixtures/070-collide.sql, whose tables, columns and function result columns are named
 * after every alias, output name and keyword the compiler writes (`_p`, `_r`, `r`, `k0`, `count`,
 * `json_agg`, ...; the list is derived from the compiler, see __tests__/unit/support/compiler-names.ts).
 * Expected values are read by the admin (bypassing RLS) with queries that cannot collide, and
 * restricted to the caller's tenant, so a wrong answer with status 200 fails as surely as a 500.
 */
import express from 'express';
import request from 'supertest';
import { compilerNames, systemColumnNames } from '../unit/support/compiler-names';
import { tokenA, tokenB, useGatewayApp } from '../support/gateway-app';
import { TENANT_A, TENANT_B, type TestDatabase } from '../support/test-database';

type Row = Record<string, unknown>;
let db: TestDatabase;
let app: express.Express;

useGatewayApp({ schemas: ['collide'], explainRoles: ['member'] }, (started) => ({ db, app } = started));

const get = (path: string, token = tokenA) => request(app).get(path).set('Authorization', `Bearer ${token}`);
const send = (method: 'post' | 'patch' | 'delete', path: string, body?: unknown, headers: Record<string, string> = {}) => {
  const req = request(app)[method](path).set('Authorization', `Bearer ${tokenA}`).set(headers);
  return body === undefined ? req : req.send(body as object);
};
const call = (fn: string, body?: unknown, format: 'text' | 'binary' = 'text', token = tokenA) => {
  const req = request(app).post(`/api/rpc/${fn}`).set('Authorization', `Bearer ${token}`).set('x-gw-result-format', format);
  return body === undefined ? req : req.send(body as object);
};

/** JSON of a query's result as the admin reads it. `expected_row` is no column of the fixture. */
async function adminJson(query: string, params: unknown[] = []): Promise<unknown> {
  const { rows } = await db.admin.query(`SELECT (${query})::text AS j`, params);
  return JSON.parse(rows[0].j as string) as unknown;
}

/** A table's rows of one tenant in key order, every column, as PostgreSQL's to_json writes them. */
async function tenantRows(table: '_w' | '_e', tenant: string): Promise<Row[]> {
  return (await adminJson(
    `SELECT coalesce(json_agg(expected_row.* ORDER BY expected_row._x), '[]') FROM collide.${table} AS expected_row WHERE expected_row.tenant_id = $1`,
    [tenant],
  )) as Row[];
}

const pick = (row: Row, columns: readonly string[]): Row => Object.fromEntries(columns.map((c) => [c, row[c]]));
const byKeys = (rows: Row[], keys: number[]): Row[] => keys.map((k) => rows.find((r) => r._x === k)!);

describe('the collide fixture', () => {
  it('has a column named after every name the compiler writes, on both tables', async () => {
    const names = compilerNames();
    for (const table of ['_w', '_e']) {
      const { rows } = await db.admin.query<{ attname: string }>(
        "SELECT attname FROM pg_attribute WHERE attrelid = $1::regclass AND attnum > 0 AND NOT attisdropped",
        [`collide.${table}`],
      );
      const columns = new Set(rows.map((r) => r.attname));
      expect(names.filter((n) => !columns.has(n) && !systemColumnNames.has(n))).toEqual([]);
    }
    expect(names).toEqual(expect.arrayContaining(['_p', '_r', 'r', '_t', 'k0', 'count', 'json_agg']));
  });
});

describe('lists', () => {
  it('returns the rows, every column, not the values of a column named _p', async () => {
    const expected = await tenantRows('_w', TENANT_A);
    const res = await get('/api/_w?count=exact');
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual(expected);
    expect(res.body.count).toBe(3);
    expect(res.body.total).toBe(3);
  });

  it('keeps unselected ordering keys out of the rows when columns are named _r, r and k0 (LATERAL shape), and pages with the cursor', async () => {
    const columns = ['_p', '_r', 'r', 'k0', 'k1', '_x'];
    const expected = (await tenantRows('_w', TENANT_A)).sort((a, b) => Number(b.count) - Number(a.count)).map((r) => pick(r, columns));
    const first = await get(`/api/_w?select=${columns.join(',')}&sort=-count&limit=2&count=exact`);
    expect(first.status).toBe(200);
    expect(first.body.data).toEqual(expected.slice(0, 2));
    expect(first.body.total).toBe(3);
    const second = await get(`/api/_w?select=${columns.join(',')}&sort=-count&limit=2&cursor=${first.body.next_cursor}`);
    expect(second.status).toBe(200);
    expect(second.body.data).toEqual(expected.slice(2));
  });

  it('pages through a nullable ordering key with the cursor', async () => {
    const rows = await tenantRows('_w', TENANT_A);
    // v DESC NULLS FIRST, then the key: _x 2 (v NULL), 3, 1.
    const expected = byKeys(rows, [2, 3, 1]);
    const seen: Row[] = [];
    let path = '/api/_w?sort=-v&limit=1';
    for (let page = 0; page < 4 && path; page++) {
      const res = await get(path);
      expect(res.status).toBe(200);
      seen.push(...(res.body.data as Row[]));
      path = res.body.next_cursor ? `/api/_w?sort=-v&limit=1&cursor=${res.body.next_cursor}` : '';
    }
    expect(seen).toEqual(expected);
  });

  it('pages distinct values of a column named distinct, with the total', async () => {
    const res = await get('/api/_w?distinct=distinct&count=exact');
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual(await adminJson(
      `SELECT json_agg(json_build_object('distinct', d) ORDER BY d) FROM (SELECT DISTINCT w."distinct" AS d FROM collide._w AS w WHERE w.tenant_id = $1) AS expected_row`,
      [TENANT_A],
    ));
    expect(res.body.total).toBe(2);
  });

  it('searches the text columns, all or named', async () => {
    const rows = await tenantRows('_w', TENANT_A);
    const all = await get('/api/_w?search=a2');
    expect(all.status).toBe(200);
    expect(all.body.data).toEqual(byKeys(rows, [2]));
    const named = await get('/api/_w?search=a3&search_columns=_p,r&select=_x,_p,r');
    expect(named.status).toBe(200);
    expect(named.body.data).toEqual([pick(byKeys(rows, [3])[0]!, ['_x', '_p', 'r'])]);
  });

  it('filters on columns named like the aliases, with every kind of operator', async () => {
    const rows = await tenantRows('_w', TENANT_A);
    const cases: [string, number[]][] = [
      ['_p=eq._p:A1', [1]],
      ['_r=in.(_r:A1,_r:A3)', [1, 3]],
      ['like=like.like:A*', [1, 2, 3]],
      ['ilike=ilike.*a2', [2]],
      ['v=is_null', [2]],
      ['count.gt=10&_t=ne._t:A3', [2]],
      ['a=contains.A3', [3]],
      // `in` on an array column unnests its items as `_in(v)`, beside columns named _in and v.
      ['a=in.("{A1,all}","{A3,all}")', [1, 3]],
    ];
    for (const [query, keys] of cases) {
      const res = await get(`/api/_w?${query}`);
      expect({ query, status: res.status, data: res.body.data }).toEqual({ query, status: 200, data: byKeys(rows, keys) });
    }
  });
});

describe('get', () => {
  it('returns the row with every column, and 404 for another tenant', async () => {
    const [row] = byKeys(await tenantRows('_w', TENANT_A), [1]);
    const res = await get('/api/_w/1');
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual(row);
    expect((await get('/api/_w/4')).status).toBe(404);
  });
});

describe('expand, nested expand and child routes', () => {
  let parents: Row[];
  let children: Row[];
  const childrenOf = (key: number): Row[] => children.filter((c) => c._pa === key);
  beforeAll(async () => {
    parents = await tenantRows('_w', TENANT_A);
    children = await tenantRows('_e', TENANT_A);
  });

  it('nests the children (json_agg over rows with columns named _e, _x) under every parent, other tenants left out', async () => {
    const res = await get('/api/_w?expand=nested:family');
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual(parents.map((p) => ({ ...p, family: childrenOf(p._x as number) })));
    // The planted child 15 of tenant B points at A's parent 1: RLS keeps it out.
    expect((res.body.data as Row[])[0]!.family).toHaveLength(2);
  });

  it('nests the children in the LATERAL shape, under a relation named _e', async () => {
    const res = await get('/api/_w?select=_p,r&sort=-count&expand=nested:_e');
    expect(res.status).toBe(200);
    const expected = [...parents].sort((a, b) => Number(b.count) - Number(a.count)).map((p) => ({ ...pick(p, ['_p', 'r']), _e: childrenOf(p._x as number) }));
    expect(res.body.data).toEqual(expected);
  });

  it('embeds the parent row (to_json of rows with columns named _e), null when RLS hides it', async () => {
    const res = await get('/api/_e?expand=family');
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual(children.map((c) => ({ ...c, family: parents.find((p) => p._x === c._pa) ?? null })));
    const b = await get('/api/_e?select=_x,_p&sort=-count&expand=_w', tokenB);
    expect(b.status).toBe(200);
    const parentsB = await tenantRows('_w', TENANT_B);
    const childrenB = (await tenantRows('_e', TENANT_B)).sort((x, y) => Number(y.count) - Number(x.count));
    expect(b.body.data).toEqual(childrenB.map((c) => ({ ...pick(c, ['_x', '_p']), _w: parentsB.find((p) => p._x === c._pa) ?? null })));
    expect((b.body.data as Row[]).find((c) => c._x === 15)?._w).toBeNull();
  });

  it('expands on the get route, both ways', async () => {
    const parent = await get('/api/_w/1?expand=nested:family');
    expect(parent.status).toBe(200);
    expect(parent.body.data).toEqual({ ...parents[0], family: childrenOf(1) });
    const child = await get('/api/_e/13?select=_p,_r&expand=_w');
    expect(child.status).toBe(200);
    expect(child.body.data).toEqual({ ...pick(children.find((c) => c._x === 13)!, ['_p', '_r']), _w: parents.find((p) => p._x === 2) });
  });

  it('lists the children of one parent on the child route, with count=exact, and 404 for a hidden parent', async () => {
    const res = await get('/api/_w/1/_e?count=exact');
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual(childrenOf(1));
    expect(res.body.total).toBe(2);
    const lateral = await get('/api/_w/1/family?select=r,_p&sort=-count&expand=_w');
    expect(lateral.status).toBe(200);
    expect(lateral.body.data).toEqual([...childrenOf(1)].reverse().map((c) => ({ ...pick(c, ['r', '_p']), _w: parents[0] })));
    expect((await get('/api/_w/4/_e')).status).toBe(404);
  });
});

describe('aggregate and explain', () => {
  it('aggregates columns named count, v and _p over the tenant\'s filtered rows', async () => {
    const expected = (await adminJson(
      `SELECT json_build_object('count', count(*), 'sum', sum(w.count), 'avg', avg(w.v), 'max', max(w."_p"), 'filtered', count(*) FILTER (WHERE w."_p" <> '_p:A1')) FROM collide._w AS w WHERE w.tenant_id = $1`,
      [TENANT_A],
    )) as Record<string, unknown>;
    const cases: [string, unknown][] = [
      ['fn=count', { fn: 'count', value: expected.count }],
      ['fn=sum&column=count', { fn: 'sum', column: 'count', value: expected.sum }],
      ['fn=avg&column=v', { fn: 'avg', column: 'v', value: expected.avg }],
      ['fn=max&column=_p', { fn: 'max', column: '_p', value: expected.max }],
      ['fn=count&_p=ne._p:A1', { fn: 'count', value: expected.filtered }],
    ];
    for (const [query, data] of cases) {
      const res = await get(`/api/_w/aggregate?${query}`);
      expect({ query, status: res.status, data: res.body.data }).toEqual({ query, status: 200, data });
    }
  });

  it('explains the list statements of every shape', async () => {
    for (const query of ['count=exact', 'select=_p,_r&sort=-count&expand=nested:family&count=exact', 'distinct=distinct&search=a1']) {
      const res = await get(`/api/_w/_explain?${query}`);
      expect({ query, status: res.status }).toEqual({ query, status: 200 });
      expect(res.body.data.plan[0].Plan).toBeDefined();
    }
  });
});

describe('writes with returning', () => {
  const textColumns = async (): Promise<string[]> => {
    const { rows } = await db.admin.query<{ attname: string }>(
      "SELECT attname FROM pg_attribute WHERE attrelid = 'collide._w'::regclass AND attnum > 0 AND NOT attisdropped AND atttypid = 'text'::regtype",
    );
    return rows.map((r) => r.attname);
  };
  const adminRow = async (key: number): Promise<Row | null> =>
    (await adminJson('SELECT to_json(expected_row.*) FROM collide._w AS expected_row WHERE expected_row._x = $1', [key])) as Row | null;

  it('inserts one row naming every column, and returns it', async () => {
    const body: Row = { _x: 100, count: 1, v: 2.5, a: ['x'] };
    for (const c of await textColumns()) body[c] = `new ${c}`;
    const res = await send('post', '/api/_w', body);
    expect(res.status).toBe(201);
    const stored = await adminRow(100);
    expect(stored).toMatchObject({ ...body, tenant_id: TENANT_A });
    expect(res.body.data).toEqual(stored);
  });

  it('inserts a batch (jsonb_populate_record of rows with columns v, n, _r) and returns the chosen columns', async () => {
    const res = await send('post', '/api/_w?returning=_x,_p,_r,r,v,n', [
      { _x: 101, _p: 'p101', _r: 'r101', r: 'rr101', v: 1, n: 'n101', _e: 'e101', _a: 'a101' },
      { _x: 102, _p: 'p102', v: 2 },
    ]);
    expect(res.status).toBe(201);
    expect(res.body.count).toBe(2);
    const stored = [await adminRow(101), await adminRow(102)] as Row[];
    expect(stored[0]).toMatchObject({ _e: 'e101', _a: 'a101', n: 'n101' });
    expect(res.body.data).toEqual(stored.map((r) => pick(r, ['_x', '_p', '_r', 'r', 'v', 'n'])));
  });

  it('upserts (ON CONFLICT ... EXCLUDED with a column named excluded) and ignores duplicates', async () => {
    const merged = await send('post', '/api/_w', [{ _x: 100, _p: 'merged', excluded: 'ex' }, { _x: 103, _p: 'p103' }], { 'x-upsert': 'true' });
    expect(merged.status).toBe(201);
    const stored = [await adminRow(100), await adminRow(103)] as Row[];
    expect(stored[0]).toMatchObject({ _p: 'merged', excluded: 'ex', _r: 'new _r' });
    expect(merged.body.data).toEqual(stored);
    const ignored = await send('post', '/api/_w?returning=_x,_p', [{ _x: 100, _p: 'ignored' }, { _x: 104, _p: 'p104' }], { prefer: 'resolution=ignore-duplicates' });
    expect(ignored.status).toBe(201);
    expect(ignored.body.data).toEqual([{ _x: 104, _p: 'p104' }]);
    expect(await adminRow(100)).toMatchObject({ _p: 'merged' });
  });

  it('names the failing row of a batch (the row probe statements)', async () => {
    const res = await send('post', '/api/_w', [{ _x: 105, _p: 'ok' }, { _x: 106, _p: 'ok' }, { _x: 100, _p: 'dup' }]);
    expect(res.status).toBe(409);
    expect(res.body.details.row).toBe(2);
    expect(await adminRow(105)).toBeNull();
  });

  it('updates one row and returns it; another tenant\'s row is 404', async () => {
    const res = await send('patch', '/api/_w/100', { _p: 'patched', _r: 'patched _r', r: 'patched r', _t: 'patched _t', count: 5 });
    expect(res.status).toBe(200);
    const stored = await adminRow(100);
    expect(stored).toMatchObject({ _p: 'patched', _r: 'patched _r', r: 'patched r', _t: 'patched _t', count: 5 });
    expect(res.body.data).toEqual(stored);
    const scoped = await send('patch', '/api/_w/100?returning=_w,_p', { _w: 'patched _w' });
    expect(scoped.body.data).toEqual({ _w: 'patched _w', _p: 'patched' });
    expect((await send('patch', '/api/_w/4', { _p: 'x' })).status).toBe(404);
  });

  it('updates several rows in one bulk PATCH (one statement), each setting its own columns; another tenant\'s row is 404', async () => {
    const res = await send('patch', '/api/_w?returning=_x,_p,_r,count', [{ _x: 100, _p: 'bulk p', count: 7 }, { _x: 102, _r: 'bulk _r' }]);
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual([
      { _x: 100, _p: 'bulk p', _r: (await adminRow(100))!._r, count: 7 },
      { _x: 102, _p: (await adminRow(102))!._p, _r: 'bulk _r', count: (await adminRow(102))!.count },
    ]);
    expect(await adminRow(100)).toMatchObject({ _p: 'bulk p', count: 7 });
    expect(await adminRow(102)).toMatchObject({ _r: 'bulk _r' });
    const theirs = await send('patch', '/api/_w', [{ _x: 100, _p: 'no' }, { _x: 4, _p: 'x' }]);
    expect(theirs.status).toBe(404);
    expect(theirs.body.details.row).toBe(1);
    expect(await adminRow(100)).toMatchObject({ _p: 'bulk p' });
  });

  it('deletes with and without returning', async () => {
    const before = (await adminRow(101))!;
    const res = await send('delete', '/api/_w/101?returning=_x,_p,_r,r');
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual(pick(before, ['_x', '_p', '_r', 'r']));
    expect((await send('delete', '/api/_w/102')).status).toBe(204);
    expect(await adminRow(101)).toBeNull();
    expect(await adminRow(102)).toBeNull();
    expect((await send('delete', '/api/_w/4')).status).toBe(404);
  });
});

describe('function calls, text and binary results', () => {
  const tenantFunctionRows = (where = 'true') =>
    adminJson(`SELECT coalesce(json_agg(expected_row.* ORDER BY expected_row._x), '[]') FROM collide._w AS expected_row WHERE expected_row.tenant_id = $1 AND ${where}`, [TENANT_A]);

  for (const format of ['text', 'binary'] as const) {
    it(`returns the rows of functions whose result columns are named r, v, a, _p, _r (${format})`, async () => {
      const cases: [string, unknown, () => Promise<unknown>][] = [
        ['everything', undefined, () => tenantFunctionRows()],
        ['everything', { a: '_p:A2' }, () => tenantFunctionRows(`expected_row."_p" = '_p:A2'`)],
        ['everything', ['_p:A3'], () => tenantFunctionRows(`expected_row."_p" = '_p:A3'`)],
        ['one', { r: 1 }, async () => ((await tenantFunctionRows('expected_row._x = 1')) as Row[])[0]],
        ['one', [4], async () => null],
        ['r', { _e: 2 }, () => adminJson('SELECT json_agg(expected_row.*) FROM collide.r(2) AS expected_row')],
        ['a', undefined, () => adminJson('SELECT to_json(collide.a())')],
        ['v', undefined, () => adminJson('SELECT json_agg(w."_r" ORDER BY w._x) FROM collide._w AS w WHERE w.tenant_id = $1', [TENANT_A])],
        ['v', { _p: '_p:A1' }, async () => ['_r:A1']],
        ['n', { r: 'x' }, async () => 'n:x'],
        ['n', ['y'], async () => 'n:y'],
        ['sum_r', ['t', 1, 2, 3], async () => 't6'],
        ['sum_r', { _t: 'u', r: [4, 5] }, async () => 'u9'],
      ];
      for (const [fn, body, expected] of cases) {
        const res = await call(fn, body, format);
        expect({ fn, body, status: res.status, data: res.body.data }).toEqual({ fn, body, status: 200, data: await expected() });
      }
    });
  }

  it('calls a void function with an argument named a', async () => {
    for (const format of ['text', 'binary'] as const) {
      const res = await call('nothing', { a: 'x' }, format);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ data: null });
    }
  });
});
