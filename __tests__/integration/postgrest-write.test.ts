/**
 * The PostgREST dialect's writes through @supabase/postgrest-js over HTTP (docs/postgrest-dialect.md,
 * "Writes"): insert (one, bulk, columns=, missing=default), upsert (merge / ignore duplicates,
 * on_conflict), PUT, PATCH and DELETE by filter (a filter required, max-affected), return=minimal /
 * headers-only / representation with select and embeds, Location, tx=rollback, the access policy
 * and allow-list on writes (refused before SQL), and tenant isolation: tenant B never reads,
 * changes or deletes tenant A's rows, nor inserts into tenant A.
 * Fixtures: __tests__/fixtures/080-postgrest.sql, 081-postgrest-functions.sql (pgrst.notes).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { GatewayOptions } from '../../lib';
import { pgrstTokenA, pgrstTokenB, startPostgrestApp, type PostgrestApp } from '../support/postgrest-app';
import { createTestDatabase, TENANT_A, TENANT_B, type TestDatabase } from '../support/test-database';

let db: TestDatabase;
const apps: PostgrestApp[] = [];
let executed: string[] = [];

async function appWith(options: Partial<GatewayOptions> = {}): Promise<PostgrestApp> {
  const app = await startPostgrestApp({ stages: { execute: (ctx, execute) => (executed.push(ctx.plan.query?.text ?? ''), execute(ctx)) }, ...options }, db);
  apps.push(app);
  return app;
}

let app: PostgrestApp;
const A = () => app.client(pgrstTokenA);
const B = () => app.client(pgrstTokenB);
const bearer = (token = pgrstTokenA): Record<string, string> => ({ Authorization: `Bearer ${token}` });
/** The notes as the database owner sees them (no RLS): what was really written. */
async function notes(where = 'true'): Promise<{ id: number; tenant_id: string; slug: string; body: string }[]> {
  const r = await db.admin.query(`SELECT id, tenant_id::text, slug, body FROM pgrst.notes WHERE ${where} ORDER BY id`);
  return r.rows as never;
}

beforeAll(async () => {
  db = await createTestDatabase();
  app = await appWith();
});
afterAll(async () => {
  for (const a of apps) await a.close();
  await db.drop();
});

describe('postgrest writes: insert', () => {
  it('POST one row: 201 without a body by default (return=minimal), the row is in the caller tenant', async () => {
    const { status, data, error } = await A().from('notes').insert({ id: 1, slug: 'n1', body: 'hello' });
    expect(error).toBeNull();
    expect(status).toBe(201);
    expect(data).toBeNull();
    expect(await notes('id = 1')).toEqual([{ id: 1, tenant_id: TENANT_A, slug: 'n1', body: 'hello' }]);
  });

  it('.select() returns the representation, shaped by select, with embeds', async () => {
    const { status, data, error } = await A().from('notes').insert({ id: 2, slug: 'n2', author_id: 1 }).select('id, slug, body, author:authors(name)');
    expect(error).toBeNull();
    expect(status).toBe(201);
    expect(data).toEqual([{ id: 2, slug: 'n2', body: 'empty', author: { name: 'Ada' } }]);
  });

  it('bulk insert in one statement; a failing row leaves no row written', async () => {
    const { data, error } = await A().from('notes').insert([{ id: 3, slug: 'n3' }, { id: 4, slug: 'n4', body: 'x' }]).select('id, body');
    expect(error).toBeNull();
    // postgrest-js sends columns="id","slug","body": a key missing from a row is NULL... except with defaultToNull false (missing=default).
    expect(data).toEqual([{ id: 3, body: null }, { id: 4, body: 'x' }].map((r) => (r.body === null ? { ...r, body: r.body } : r)));
  });
});
