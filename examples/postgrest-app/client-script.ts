/**
 * Client code as a PostgREST (or Supabase) project has it: @supabase/postgrest-js against a base
 * URL and a bearer token. Nothing in it knows about tablegate: pointed at PostgREST or at app.ts,
 * it answers the same. It reads (embeds, filters, order, a range with an exact count), writes
 * (insert with select, update and delete by filter, upsert) and calls functions, and returns what
 * it saw.
 *
 * Tables it uses (schema `pgrst` of tablegate's test fixtures, __tests__/fixtures/080-postgrest.sql
 * and 081-postgrest-functions.sql): authors(id, name), books(id, title, genre, author_id -> authors),
 * shelves through book_shelves, notes(id, slug, body, author_id -> authors) with slug unique per
 * tenant, and the functions add(a, b) and books_by_genre(g).
 *
 * Run: URL=http://localhost:3000/rest/v1 TOKEN=<jwt> npx ts-node examples/postgrest-app/client-script.ts
 */
import { PostgrestClient } from '@supabase/postgrest-js';

export interface ScriptResult {
  readonly fiction: { readonly books: unknown; readonly total: number | null };
  readonly created: unknown;
  readonly notes: unknown;
  readonly updated: unknown;
  readonly upserted: unknown;
  readonly sum: unknown;
  readonly titles: unknown;
  readonly deleted: unknown;
  readonly errors: readonly unknown[];
}

export async function runClientScript(url: string, token: string, schema = 'pgrst'): Promise<ScriptResult> {
  const db = new PostgrestClient(url, { headers: { Authorization: `Bearer ${token}` }, schema });
  const errors: unknown[] = [];
  const check = <T extends { error: unknown }>(r: T): T => (r.error && errors.push(r.error), r);

  // Reads: a page of fiction, newest first, with each book's author and shelves and the total.
  const page = check(
    await db
      .from('books')
      .select('id, title, author:authors!author_id(name), shelves(label)', { count: 'exact' })
      .eq('genre', 'fiction')
      .order('id', { ascending: false })
      .range(0, 9),
  );
  const first = check(await db.from('authors').select('id').order('id').limit(1).single()).data;

  // Writes, each answering with the written rows as `select` shapes them.
  const created = check(await db.from('notes').insert([{ slug: 'script-1', body: 'first', author_id: first?.id }, { slug: 'script-2', body: 'second' }]).select('slug, author:authors(name)')).data;
  const notes = check(await db.from('notes').select('slug, body, author:authors(name)').order('slug')).data;
  const updated = check(await db.from('notes').update({ body: 'edited' }).eq('slug', 'script-2').select('slug, body').single()).data;
  const upserted = check(await db.from('notes').upsert([{ slug: 'script-2', body: 'merged' }, { slug: 'script-3', body: 'third' }], { onConflict: 'tenant_id,slug' }).select('slug, body')).data;

  // Functions: a scalar, and a set-returning one read like a table.
  const sum = check(await db.rpc('add', { a: 40, b: 2 })).data;
  const titles = check(await db.rpc('books_by_genre', { g: 'fiction' }).select('title').order('title')).data;

  const deleted = check(await db.from('notes').delete().like('slug', 'script-%').select('slug')).data;
  return { fiction: { books: page.data, total: page.count }, created, notes, updated, upserted, sum, titles, deleted, errors };
}

if (require.main === module) {
  runClientScript(process.env['URL'] ?? 'http://localhost:3000/rest/v1', process.env['TOKEN'] ?? '')
    .then((r) => console.log(JSON.stringify(r, null, 2)))
    .catch((e: unknown) => {
      console.error(e);
      process.exit(1);
    });
}
