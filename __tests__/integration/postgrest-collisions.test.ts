/**
 * The PostgREST dialect's statements over tables whose columns are named after every name the
 * compiler writes (__tests__/fixtures/070-collide.sql; docs/architecture.md, "Names the compiler
 * writes"): aliases `_n0`, `_e1`, `_g2`, `_s3`, output names `j`, `c0`, `o0`, `key`, `value`, ...
 * Reads with embeds (both ways, page first and not), aggregates, ordering by an embed, counts and
 * CSV must return the data, never a column that shadows an alias.
 */
import type { PostgrestApp } from '../support/postgrest-app';
import { usePostgrestApp } from '../support/postgrest-app';

let app: PostgrestApp;
usePostgrestApp({ schemas: ['collide'] }, (a) => (app = a));
const db = () => app.client();

it('lists, embeds both ways and through !inner, with every kind of read', async () => {
  const parents = await db().from('_w').select('_x, count, _e(_x, j:_p)', { count: 'exact' }).order('_x').order('_x', { referencedTable: '_e' });
  expect(parents.error).toBeNull();
  expect(parents.count).toBe(3);
  expect(parents.data).toEqual([
    { _x: 1, count: 10, _e: [{ _x: 11, j: '_p:A11' }, { _x: 12, j: '_p:A12' }] },
    { _x: 2, count: 20, _e: [{ _x: 13, j: '_p:A13' }] },
    { _x: 3, count: 30, _e: [] },
  ]);
  const inner = await db().from('_w').select('_x, _e!inner(_x)', { count: 'exact' }).eq('_e._x', 13);
  expect(inner.data).toEqual([{ _x: 2, _e: [{ _x: 13 }] }]);
  expect(inner.count).toBe(1);
  const children = await fetch(`${app.url}/_e?select=_x,_w(_x,j),...family(o0:count)&order=_w(count).desc,_x`, { headers: { Authorization: (db() as unknown as { headers: Headers }).headers.get('Authorization')! } });
  expect(children.status).toBe(200);
  expect(await children.json()).toEqual([
    { _x: 13, _w: { _x: 2, j: 'j:A2' }, o0: 20 },
    { _x: 11, _w: { _x: 1, j: 'j:A1' }, o0: 10 },
    { _x: 12, _w: { _x: 1, j: 'j:A1' }, o0: 10 },
  ]);
});

it('aggregates, grouped and inside an embed', async () => {
  const grouped = await db().from('_e').select('_pa, count(), c0:_x.sum()').order('_pa');
  expect(grouped.error).toBeNull();
  expect(grouped.data).toEqual([
    { _pa: 1, count: 2, c0: 23 },
    { _pa: 2, count: 1, c0: 13 },
  ]);
  const nested = await db().from('_w').select('_x, _e(count())').order('_x');
  expect(nested.data).toEqual([
    { _x: 1, _e: [{ count: 2 }] },
    { _x: 2, _e: [{ count: 1 }] },
    { _x: 3, _e: [{ count: 0 }] },
  ]);
});

it('CSV and filters on columns named like the aliases', async () => {
  const csv = await db().from('_w').select('_x,key,value').lte('_x', 2).order('_x').csv();
  expect(csv.data).toBe('_x,key,value\n1,key:A1,value:A1\n2,key:A2,value:A2');
  const filtered = await db().from('_w').select('_x').or('j.eq.j:A1,_n0.eq._n0:A3').order('_x');
  expect(filtered.data).toEqual([{ _x: 1 }, { _x: 3 }]);
});

it('computed fields and computed relationships of a table with columns named like the level aliases', async () => {
  // The function takes the whole row: written bare (`fn(_n0)`), `_n0` would be the text column `_n0`.
  await app.db.admin.query(`
    CREATE FUNCTION collide.shout(collide._w) RETURNS text LANGUAGE sql STABLE AS $$ SELECT upper($1._p) $$;
    CREATE FUNCTION collide.kids(collide._w) RETURNS SETOF collide._e LANGUAGE sql STABLE AS $$ SELECT * FROM collide._e WHERE _pa = $1._x $$;
    GRANT EXECUTE ON FUNCTION collide.shout(collide._w), collide.kids(collide._w) TO PUBLIC;
  `);
  await app.gateway.reloadSchema();
  const { data, error } = await db().from('_w').select('_x, shout, kids(_x, _n0)').lte('_x', 2).order('_x').order('_x', { referencedTable: 'kids' });
  expect(error).toBeNull();
  expect(data).toEqual([
    { _x: 1, shout: '_P:A1', kids: [{ _x: 11, _n0: '_n0:A11' }, { _x: 12, _n0: '_n0:A12' }] },
    { _x: 2, shout: '_P:A2', kids: [{ _x: 13, _n0: '_n0:A13' }] },
  ]);
  const filtered = await db().from('_w').select('_x').eq('shout', '_P:A3');
  expect(filtered.data).toEqual([{ _x: 3 }]);
});
