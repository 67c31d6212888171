/**
 * Client code as a PostgREST project has it: @supabase/postgrest-js against a base URL and a
 * bearer token. It writes, reads, updates, calls a function and deletes, and returns what it saw.
 * Pointed at tablegate's PostgREST dialect it runs unchanged (examples/postgrest-app/README.md).
 *
 * Tables it uses (schema `pgrst` of tablegate's test fixtures, __tests__/fixtures/080-postgrest.sql
 * and 081-postgrest-functions.sql): notes(id, slug, body, author_id -> authors), authors(id, name),
 * and the function add(a integer, b integer) returns integer.
 *
 * Run: URL=http://localhost:3000/rest/v1 TOKEN=<jwt> npx ts-node examples/postgrest-app/notes-script.ts
 */
import { PostgrestClient } from '@supabase/postgrest-js';

export interface ScriptResult {
  readonly created: unknown;
  readonly listed: unknown;
  readonly updated: unknown;
  readonly sum: unknown;
  readonly deleted: unknown;
  readonly errors: readonly unknown[];
}

export async function runNotesScript(url: string, token: string, schema = 'pgrst'): Promise<ScriptResult> {
  const db = new PostgrestClient(url, { headers: { Authorization: `Bearer ${token}` }, schema });
  const errors: unknown[] = [];
  const check = <T extends { error: unknown }>(r: T): T => (r.error && errors.push(r.error), r);

  const created = check(await db.from('notes').insert([{ id: 501, slug: 'script-1', body: 'first', author_id: 1 }, { id: 502, slug: 'script-2', body: 'second' }]).select('id, slug, author:authors(name)')).data;
  const listed = check(await db.from('notes').select('slug, body').like('slug', 'script-%').order('id')).data;
  const updated = check(await db.from('notes').update({ body: 'edited' }).eq('id', 502).select('id, body').single()).data;
  const sum = check(await db.rpc('add', { a: 40, b: 2 })).data;
  const deleted = check(await db.from('notes').delete().in('id', [501, 502]).select('id')).data;
  return { created, listed, updated, sum, deleted, errors };
}

if (require.main === module) {
  runNotesScript(process.env['URL'] ?? 'http://localhost:3000/rest/v1', process.env['TOKEN'] ?? '')
    .then((r) => console.log(JSON.stringify(r, null, 2)))
    .catch((e: unknown) => {
      console.error(e);
      process.exit(1);
    });
}
