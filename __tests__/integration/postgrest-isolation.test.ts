/**
 * The multi-tenant isolation matrix through @supabase/postgrest-js (docs/postgrest-dialect.md,
 * "Tenant isolation"): for every table of the dialect's fixture schemas and every caller (tenants
 * A, B and C, a token without a tenant), a read returns exactly that tenant's rows, as the
 * superuser counts them; counts, aggregates, CSV, embeds (to-one, to-many, many-to-many through
 * the junction) and filters naming another tenant's keys never reach another tenant's rows.
 */
import type { PostgrestApp } from '../support/postgrest-app';
import { usePostgrestApp } from '../support/postgrest-app';
import { signToken, TENANT_A, TENANT_B, TENANT_C } from '../support/test-database';

let app: PostgrestApp;
usePostgrestApp({}, (a) => (app = a));

const callers = [
  { name: 'tenant A', tenant: TENANT_A, token: signToken({ tenant_id: TENANT_A, user_id: 'alice', role: 'member' }) },
  { name: 'tenant B', tenant: TENANT_B, token: signToken({ tenant_id: TENANT_B, user_id: 'bob', role: 'member' }) },
  { name: 'tenant C (no rows)', tenant: TENANT_C, token: signToken({ tenant_id: TENANT_C, user_id: 'carol', role: 'member' }) },
  { name: 'no tenant', tenant: '', token: signToken({ user_id: 'nobody', role: 'member' }) },
];

const matrix: [string, string][] = [
  ['pgrst', 'authors'],
  ['pgrst', 'author_bios'],
  ['pgrst', 'books'],
  ['pgrst', 'shelves'],
  ['pgrst', 'book_shelves'],
  ['pgrst', 'events'],
  ['pgrst', 'notes'],
  ['pgrst_alt', 'authors'],
];

it('the matrix covers every table of the fixture schemas', async () => {
  const { rows } = await app.db.admin.query<{ s: string; t: string }>("SELECT table_schema AS s, table_name AS t FROM information_schema.tables WHERE table_schema IN ('pgrst', 'pgrst_alt') ORDER BY 1, 2");
  expect(rows.map((r) => `${r.s}.${r.t}`)).toEqual(matrix.map(([s, t]) => `${s}.${t}`).sort());
});

describe.each(callers)('$name', ({ tenant, token }) => {
  it.each(matrix)('%s.%s: rows, exact count, count() and CSV are the tenant\'s own', async (schema, table) => {
    const { rows } = await app.db.admin.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${schema}.${table} WHERE tenant_id::text = $1`, [tenant]);
    const own = rows[0]!.n;
    const client = app.client(token, schema);
    const read = await client.from(table).select('*', { count: 'exact' });
    expect(read.error).toBeNull();
    expect(read.count).toBe(own);
    expect(read.data).toHaveLength(own);
    for (const row of read.data as { tenant_id: string }[]) expect(row.tenant_id).toBe(tenant);
    expect((await client.from(table).select('count()')).data).toEqual([{ count: own }]);
    const csv = await client.from(table).select('tenant_id').csv();
    // No rows: an empty body (no header line), which postgrest-js gives as null.
    const lines = ((csv.data as unknown as string | null) ?? '').split('\n').filter((l) => l !== '');
    expect(lines.slice(1)).toEqual(Array(own).fill(tenant));
  });

  it('embeds never reach another tenant\'s rows (to-one, to-many, one-to-one, many-to-many, nested)', async () => {
    const client = app.client(token, 'pgrst');
    const { data, error } = await client.from('authors').select('tenant_id, author_bios(tenant_id), books!author_id(tenant_id, shelves(tenant_id), editor:authors!books_editor_fkey(tenant_id))');
    expect(error).toBeNull();
    const seen: string[] = [];
    const walk = (v: unknown): void => {
      if (Array.isArray(v)) v.forEach(walk);
      else if (v !== null && typeof v === 'object') for (const [k, x] of Object.entries(v)) (k === 'tenant_id' ? seen.push(x as string) : walk(x));
    };
    walk(data);
    expect(new Set(seen).size <= 1).toBe(true);
    if (seen.length) expect(seen[0]).toBe(tenant);
    // Tenant A sees its whole graph: authors, bios, books, shelves through the junction, editors.
    if (tenant === TENANT_A) expect(seen.length).toBe(3 + 2 + 5 + 4 + 4);
  });

  it('filters naming another tenant\'s keys find nothing', async () => {
    const client = app.client(token, 'pgrst');
    const other = tenant === TENANT_A ? [11, 12] : [1, 2, 3, 4, 5];
    const books = await client.from('books').select('id').in('id', other);
    expect(books.data).toEqual(tenant === TENANT_B ? [] : tenant === TENANT_A ? [] : []);
    const inner = await client.from('shelves').select('id, books!inner(id)').in('books.id', other);
    expect(inner.data).toEqual([]);
    const bySearch = await client.from('books').select('id').textSearch('fts', tenant === TENANT_A ? 'secrets' : 'engine');
    expect(bySearch.data).toEqual([]);
  });
});
