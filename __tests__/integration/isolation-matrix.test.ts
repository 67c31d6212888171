/**
 * Tenant isolation matrix: every route, every ordered pair of fixture tenants, hostile requests.
 *
 * What it proves. For each ordered pair (caller, victim) of the tenants A, B and C, no route returns
 * a row of the victim to the caller, and no request of the caller changes a row of the victim,
 * whatever the caller puts in the request: the victim's ids in paths, filters and upsert keys, the
 * victim's tenant_id in filters, bodies and cursors, a cursor the victim minted, headers naming the
 * victim, or a token it forged. A valid token without a tenant_id sees no row of anybody.
 *
 * How.
 * - The matrix is generated from data: PAIRS x case lists (the filter operators in every spelling,
 *   the tables, the relations, the write shapes, the token forgeries) x routes. Each combination is
 *   its own named test. Request values come from the database at run time (db.admin bypasses RLS).
 * - Most cases are builders aimed at a *target* tenant, run twice with the caller's valid token:
 *   aimed at the victim (the attack) and aimed at the caller itself (the control).
 * - Reads: the answer must equal, row for row, what db.admin computes for the caller's tenant alone
 *   (count=exact totals, aggregates and EXPLAIN row counts included); every tenant_id anywhere in
 *   the body (expanded objects, nested arrays, child rows) must be the caller's; no other tenant's
 *   uuid may appear in the text unless the request carried it. Neither side can pass by being
 *   empty: db.admin must confirm that the attack designates rows the victim has, and the control
 *   must return some of the caller's rows.
 * - Writes: every table is snapshot per tenant (rows as JSON text, as db.admin reads them) before and
 *   after the attack, and the snapshots must be byte-identical; the control must be accepted and
 *   change the caller's rows only.
 * - beforeAll plants, as the superuser, cross-tenant references (the victim's order under the
 *   caller's user, the victim's item and tag on the caller's order, shipments between them, ...) so
 *   that joins, expansions and child routes have victim rows within reach; a document per tenant
 *   with a shared word and one with its own word (search); spare rows to delete.
 * - The gateway runs in dev mode and every request carries x-tenant-id / x-user-id naming the victim:
 *   a token always decides, so those headers must change nothing.
 * - Function calls (POST /rpc/...) run a STABLE function that reads orders by user id (named,
 *   positional and scalar bodies) and a VOLATILE one that updates an order by id, aimed at the
 *   victim's ids: RLS inside the function must answer as for the caller alone.
 * - The last test checks that the whole matrix ran, against a floor (an emptied matrix fails).
 */
import request from 'supertest';
import { signToken, TENANT_A, TENANT_B, TENANT_C, TEST_JWT_SECRET, type TestDatabase } from '../support/test-database';
import { startGatewayApp, stopGatewayApp, type GatewayApp } from '../support/gateway-app';

type Row = Record<string, unknown>;
type Tenant = 'A' | 'B' | 'C';
type Response = request.Response;

const UUID: Readonly<Record<Tenant, string>> = { A: TENANT_A, B: TENANT_B, C: TENANT_C };
const TENANTS = Object.keys(UUID) as Tenant[];
/** Every ordered (caller, victim) pair. */
const PAIRS: [Tenant, Tenant][] = TENANTS.flatMap((caller) => TENANTS.filter((v) => v !== caller).map((victim): [Tenant, Tenant] => [caller, victim]));
const nameOf = (uuid: unknown): string => TENANTS.find((t) => UUID[t] === uuid) ?? String(uuid);

/** A word in one planted document of every tenant, and one word per tenant in its own document only. */
const SHARED_WORD = 'zeppelin';
const CODEWORD: Readonly<Record<Tenant, string>> = { A: 'quokka', B: 'narwhal', C: 'axolotl' };
/** Page size of every list request: above every table's row count, so nothing is cut. */
const LIMIT = 1000;
/** The generated cases must be at least this many (2,928 when written: 6 pairs x 488). */
const FLOOR = 2500;

// ------------------------------------------------------------------------------------------------
// Harness
// ------------------------------------------------------------------------------------------------

let started: GatewayApp | undefined;
let db: TestDatabase;
/** Per tenant, read after planting: its user and order ids (ascending), e-mail domain, a tag of its users. */
let facts: Record<Tenant, Facts>;
let ran = 0;
let planned = 0;
let serial = 0;
const next = (): number => ++serial;

interface Facts {
  readonly users: readonly number[];
  readonly orders: readonly number[];
  readonly domain: string;
  readonly tag: string;
}

beforeAll(async () => {
  started = await startGatewayApp({ devMode: true });
  db = started.db;
  await plant();
  facts = Object.fromEntries(await Promise.all(TENANTS.map(async (t) => [t, await loadFacts(t)] as const))) as Record<Tenant, Facts>;
});

afterAll(() => stopGatewayApp(started));

/** Who asks, and whose data the request is aimed at: the victim (attack) or the caller itself (control). */
interface Aim {
  readonly caller: Tenant;
  readonly victim: Tenant;
  readonly target: Tenant;
  /** The one of caller and victim that is not the target. */
  readonly other: Tenant;
}
const attackOf = (caller: Tenant, victim: Tenant): Aim => ({ caller, victim, target: victim, other: caller });
const controlOf = (caller: Tenant, victim: Tenant): Aim => ({ caller, victim, target: caller, other: victim });

// ------------------------------------------------------------------------------------------------
// Tables
// ------------------------------------------------------------------------------------------------

interface TableSpec {
  readonly name: string;
  /** The column RLS compares with the tenant (`id` for `tenants`). */
  readonly tenantColumn: string;
  /** Primary-key columns ([] without a primary key: no /:id routes). */
  readonly key: readonly string[];
  /** Columns a list request selects. */
  readonly columns: readonly string[];
  /** A valid new row referring to `t`'s own rows, without the tenant column; absent: no POST cases. */
  readonly insert?: (t: Facts, n: number) => Row;
  /** What PATCH (and an upsert's update) changes; `n` makes every value new. */
  readonly change?: (n: number) => Row;
  /** SQL condition of the rows planted for DELETE (no other case touches them); absent: no DELETE cases. */
  readonly spare?: string;
  /** false: no upsert onto the primary key (an identity ALWAYS key cannot be sent). */
  readonly upsertByKey: boolean;
}

function table(name: string, key: readonly string[], rest: Partial<TableSpec> = {}): TableSpec {
  const tenantColumn = rest.tenantColumn ?? 'tenant_id';
  return { name, key, tenantColumn, columns: [...new Set([...key, tenantColumn])], upsertByKey: key.length > 0, ...rest };
}

const TABLES: readonly TableSpec[] = [
  table('tenants', ['id'], { tenantColumn: 'id', change: (n) => ({ name: `Tenant ${n}` }) }),
  table('users', ['id'], { insert: (_t, n) => ({ email: `matrix-${n}@matrix.test`, name: `Matrix ${n}` }), change: (n) => ({ name: `Patched ${n}` }) }),
  table('orders', ['id'], { insert: (t) => ({ user_id: t.users[0], status: 'pending', total: 1 }), change: (n) => ({ notes: `patched ${n}` }) }),
  table('order_items', ['id'], { insert: (t) => ({ order_id: t.orders[0], product: 'matrix', qty: 1, price: 1 }), change: (n) => ({ price: n }), spare: "product = 'spare'" }),
  table('user_profiles', ['user_id'], { change: (n) => ({ avatar_url: `https://matrix.test/${n}.png` }) }),
  table('order_tags', ['order_id', 'tag'], { insert: (t, n) => ({ order_id: t.orders[0], tag: `matrix-${n}` }), change: (n) => ({ tag: `patched-${n}` }), spare: "tag LIKE 'spare-%'" }),
  table('audit_log', [], { columns: ['tenant_id', 'at', 'message'], insert: (_t, n) => ({ message: `matrix ${n}` }) }),
  table('shipments', ['id'], {
    insert: (t) => ({ sender_id: t.users[0], carrier: 'matrix' }),
    change: (n) => ({ shipped_at: new Date(Date.UTC(2025, 0, 1) + n * 1000).toISOString() }),
    spare: "carrier = 'spare'",
  }),
  table('we"ird table', ['id'], { insert: (_t, n) => ({ select: `matrix ${n}` }), change: (n) => ({ select: `patched ${n}` }), spare: `"semi;colon" = 'spare'` }),
  table('documents', ['id'], { insert: (_t, n) => ({ title: `Matrix ${n}`, body: 'matrix' }), change: (n) => ({ title: `Patched ${n}` }), spare: "body = 'spare'" }),
  table('write_items', ['id'], { upsertByKey: false, insert: (_t, n) => ({ sku: `matrix-${n}`, name: 'Matrix' }), change: (n) => ({ name: `Patched ${n}` }), spare: "sku LIKE 'spare-%'" }),
  table('write_kv', ['key'], { insert: (_t, n) => ({ key: `matrix-${n}`, value: 'matrix' }), change: (n) => ({ value: `patched ${n}` }), spare: "key LIKE 'spare-%'" }),
];
const spec = (name: string): TableSpec => TABLES.find((t) => t.name === name)!;

// ------------------------------------------------------------------------------------------------
// Planted data
// ------------------------------------------------------------------------------------------------

const FIRST_USER = '(SELECT min(id) FROM users WHERE tenant_id = $1)';
const FIRST_ORDER = '(SELECT min(id) FROM orders WHERE tenant_id = $1)';

/** Rows every tenant gets, and the cross-tenant references of every pair, written by the superuser. */
async function plant(): Promise<void> {
  const run = (sql: string, params: unknown[]) => db.admin.query(sql, params);
  for (const t of TENANTS) {
    const own = [UUID[t], t];
    await run(`INSERT INTO documents (tenant_id, title, body) VALUES ($1, 'Matrix memo ' || $2::text, $3 || ' ' || $4)`, [...own, SHARED_WORD, CODEWORD[t]]);
    // C has no rows in these fixture tables: one ordinary row each, so every tenant is a victim everywhere.
    await run(`INSERT INTO write_items (tenant_id, sku, name) VALUES ($1, 'own-' || $2::text, 'Own')`, own);
    await run(`INSERT INTO write_kv (tenant_id, key, value) VALUES ($1, 'own-' || $2::text, 'own')`, own);
    await run(`INSERT INTO "we""ird table" (tenant_id, "select") VALUES ($1, 'own ' || $2::text)`, own);
    // Eight spare rows per table for the DELETE cases.
    const spares = 'generate_series(1, 8) AS i';
    await run(`INSERT INTO documents (tenant_id, title, body) SELECT $1, 'Spare ' || $2::text || i, 'spare' FROM ${spares}`, own);
    await run(`INSERT INTO shipments (tenant_id, sender_id, recipient_id, carrier) SELECT $1, ${FIRST_USER}, ${FIRST_USER}, 'spare' FROM ${spares}`, [UUID[t]]);
    await run(`INSERT INTO order_items (tenant_id, order_id, product, qty, price) SELECT $1, ${FIRST_ORDER}, 'spare', 1, 1 FROM ${spares}`, [UUID[t]]);
    await run(`INSERT INTO order_tags (tenant_id, order_id, tag) SELECT $1, ${FIRST_ORDER}, 'spare-' || i FROM ${spares}`, [UUID[t]]);
    await run(`INSERT INTO "we""ird table" (tenant_id, "select", "semi;colon") SELECT $1, 'spare', 'spare' FROM ${spares}`, [UUID[t]]);
    await run(`INSERT INTO write_items (tenant_id, sku, name) SELECT $1, 'spare-' || $2::text || '-' || i, 'Spare' FROM ${spares}`, own);
    await run(`INSERT INTO write_kv (tenant_id, key, value) SELECT $1, 'spare-' || $2::text || '-' || i, 'spare' FROM ${spares}`, own);
  }
  // $1 = X (the later caller), $2 = V (the later victim).
  const VICTIM_USER = '(SELECT min(id) FROM users WHERE tenant_id = $2)';
  for (const [x, v] of PAIRS) {
    const pair = [UUID[x], UUID[v]];
    await run(`INSERT INTO orders (tenant_id, user_id, status, total, notes) VALUES ($2, ${FIRST_USER}, 'paid', 1, 'planted')`, pair);
    await run(`INSERT INTO orders (tenant_id, user_id, status, total, notes) VALUES ($1, ${VICTIM_USER}, 'paid', 1, 'planted')`, pair);
    await run(`INSERT INTO order_items (tenant_id, order_id, product, qty, price) VALUES ($2, ${FIRST_ORDER}, 'planted', 1, 1)`, pair);
    await run(`INSERT INTO order_tags (tenant_id, order_id, tag) VALUES ($2, ${FIRST_ORDER}, 'planted-' || $2::uuid::text)`, pair);
    await run(`INSERT INTO shipments (tenant_id, sender_id, recipient_id, carrier) VALUES ($2, ${FIRST_USER}, ${FIRST_USER}, 'planted'), ($1, ${FIRST_USER}, ${VICTIM_USER}, 'planted')`, pair);
    await run(
      `INSERT INTO user_profiles (user_id, tenant_id) SELECT u.id, $2 FROM users u
       WHERE u.tenant_id = $1 AND NOT EXISTS (SELECT 1 FROM user_profiles p WHERE p.user_id = u.id) ORDER BY u.id LIMIT 1`,
      pair,
    );
  }
}

async function loadFacts(t: Tenant): Promise<Facts> {
  const { rows } = await db.admin.query(
    `SELECT (SELECT array_agg(id ORDER BY id) FROM users WHERE tenant_id = $1) AS users,
            (SELECT array_agg(id ORDER BY id) FROM orders WHERE tenant_id = $1) AS orders,
            (SELECT split_part(min(email), '@', 2) FROM users WHERE tenant_id = $1) AS domain,
            (SELECT min(tag) FROM users, unnest(tags) AS tag WHERE tenant_id = $1) AS tag`,
    [UUID[t]],
  );
  const row = rows[0] as { users: unknown[]; orders: unknown[]; domain: string; tag: string };
  return { users: row.users.map(Number), orders: row.orders.map(Number), domain: row.domain, tag: row.tag };
}

// ------------------------------------------------------------------------------------------------
// Direct database access (db.admin bypasses RLS)
// ------------------------------------------------------------------------------------------------

/** A SQL condition over one table; $1.. are `params`. */
interface Cond {
  readonly where: string;
  readonly params: readonly unknown[];
}
const ALL: Cond = { where: 'true', params: [] };

const ident = (name: string): string => `"${name.replace(/"/g, '""')}"`;
const shift = (sql: string, by: number): string => sql.replace(/\$(\d+)/g, (_m, i: string) => `$${Number(i) + by}`);
const and = (cond: Cond, column: string, value: unknown): Cond => ({ where: `(${cond.where}) AND ${ident(column)} = $${cond.params.length + 1}`, params: [...cond.params, value] });

/** Rows as PostgreSQL's to_json renders them, which is the gateway's encoding. */
async function adminJson(sql: string, params: readonly unknown[] = []): Promise<Row[]> {
  const { rows } = await db.admin.query(`SELECT coalesce(json_agg(r), '[]')::text AS j FROM (${sql}) AS r`, [...params]);
  return JSON.parse((rows[0] as { j: string }).j) as Row[];
}

/** `columns` of the rows of `tenant` in `t` that satisfy `cond`. */
function rowsOf(t: TableSpec, tenant: Tenant, columns: readonly string[], cond: Cond, order?: string): Promise<Row[]> {
  const orderBy = order ?? (t.key.length ? t.key.map(ident).join(', ') : '1');
  return adminJson(
    `SELECT ${columns.map(ident).join(', ')} FROM ${ident(t.name)} WHERE ${ident(t.tenantColumn)} = $1 AND (${shift(cond.where, 1)}) ORDER BY ${orderBy}`,
    [UUID[tenant], ...cond.params],
  );
}

async function countOf(t: TableSpec, tenant: Tenant, cond: Cond): Promise<number> {
  const { rows } = await db.admin.query(`SELECT count(*)::int AS n FROM ${ident(t.name)} WHERE ${ident(t.tenantColumn)} = $1 AND (${shift(cond.where, 1)})`, [
    UUID[tenant],
    ...cond.params,
  ]);
  return (rows[0] as { n: number }).n;
}

/** `columns` (default: the key) of the first row, by key, of `tenant` in `t`: a spare row, or one that is not. */
async function firstRow(t: TableSpec, tenant: Tenant, { spare = false, columns = t.key }: { spare?: boolean; columns?: readonly string[] } = {}): Promise<Row> {
  const marker = t.spare === undefined ? 'true' : spare ? t.spare : `(${t.spare}) IS NOT TRUE`;
  const [row] = await rowsOf(t, tenant, columns, { where: marker, params: [] });
  if (row === undefined) throw new Error(`tenant ${tenant} has no ${spare ? 'spare ' : ''}row in ${t.name}`);
  return row;
}

/** Every table's rows per tenant, as JSON text in a total order: `${table}/${tenant}` -> text. */
async function snapshot(): Promise<Map<string, string>> {
  const parts = TABLES.map(
    (t) =>
      `SELECT '${t.name.replace(/'/g, "''")}' AS tbl, r.${ident(t.tenantColumn)}::text AS tenant, json_agg(r ORDER BY r::text)::text AS rows ` +
      `FROM ${ident(t.name)} AS r GROUP BY 2`,
  );
  const { rows } = await db.admin.query(parts.join(' UNION ALL '));
  return new Map((rows as { tbl: string; tenant: string; rows: string }[]).map((r) => [`${r.tbl}/${nameOf(r.tenant)}`, r.rows]));
}

/** The `${table}/${tenant}` parts whose text differs between two snapshots. */
function changed(before: Map<string, string>, after: Map<string, string>): string[] {
  return [...new Set([...before.keys(), ...after.keys()])].filter((k) => before.get(k) !== after.get(k)).sort();
}

// ------------------------------------------------------------------------------------------------
// HTTP
// ------------------------------------------------------------------------------------------------

interface Req {
  readonly method: 'get' | 'post' | 'patch' | 'delete';
  readonly path: string;
  /** An object or array is sent as JSON; a string is sent as it is. */
  readonly body?: unknown;
  readonly headers?: Readonly<Record<string, string>>;
}
const GET = (path: string): Req => ({ method: 'get', path });
const url = (t: TableSpec): string => `/api/${encodeURIComponent(t.name)}`;
const keyPath = (t: TableSpec, row: Row): string => t.key.map((c) => encodeURIComponent(String(row[c]))).join(',');
const selectOf = (columns: readonly string[]): string => columns.map(encodeURIComponent).join(',');

/**
 * Sends `req` with `token` and with dev-mode identity headers naming `intruder` (a token always wins).
 * With TABLEGATE_MATRIX_VIA_BATCH=1 (isolation-matrix-batch.test.ts) every request that a batch
 * operation can carry is sent as the one operation of a `POST /_batch` instead, and the answer is
 * that operation's status and body (or the batch's error): the same matrix through the batch door.
 */
function send(req: Req, token: string | undefined, intruder: Tenant): request.Test {
  if (process.env.TABLEGATE_MATRIX_VIA_BATCH === '1') {
    const viaBatch = sendViaBatch(req, token, intruder);
    if (viaBatch !== undefined) return viaBatch;
  }
  return sendDirect(req, token, intruder);
}

function sendViaBatch(req: Req, token: string | undefined, intruder: Tenant): request.Test | undefined {
  const headers = Object.entries(req.headers ?? {});
  if (headers.some(([name]) => name.toLowerCase() !== 'prefer')) return undefined;
  let body: unknown = req.body;
  if (typeof body === 'string') {
    try {
      body = JSON.parse(body);
    } catch {
      return undefined;
    }
  }
  const operation = {
    method: req.method.toUpperCase(),
    path: req.path.replace(/^\/api/, ''),
    ...(body === undefined ? {} : { body }),
    ...(headers.length > 0 ? { headers: Object.fromEntries(headers) } : {}),
  };
  const batch = sendDirect({ method: 'post', path: '/api/_batch', body: [operation] }, token, intruder);
  // Counted, so isolation-matrix-batch.test.ts can tell that the matrix went through the batch door.
  const counter = globalThis as { __tablegateMatrixBatches?: number };
  counter.__tablegateMatrixBatches = (counter.__tablegateMatrixBatches ?? 0) + 1;
  const unwrapped = batch.then((res) => {
    if (res.status !== 200) return res;
    const answer = (res.body as { data: { status: number; body: unknown }[] }).data[0]!;
    return { status: answer.status, body: answer.body ?? {}, text: answer.body === null ? '' : JSON.stringify(answer.body), headers: res.headers };
  });
  return unwrapped as unknown as request.Test;
}

function sendDirect(req: Req, token: string | undefined, intruder: Tenant): request.Test {
  const started_ = started!;
  let test = request(started_.app)[req.method](req.path).set('x-tenant-id', UUID[intruder]).set('x-user-id', `intruder-${intruder}`);
  if (token !== undefined) test = test.set('Authorization', `Bearer ${token}`);
  for (const [name, value] of Object.entries(req.headers ?? {})) test = test.set(name, value);
  if (req.body !== undefined) {
    test = test.set('Content-Type', 'application/json').send(typeof req.body === 'string' ? req.body : JSON.stringify(req.body));
  }
  return test;
}

/** Sends `req` as the caller of `aim`, with headers naming the victim. */
const ask = (req: Req, aim: Aim): request.Test => send(req, tokenOf(aim.caller), aim.victim);

// ------------------------------------------------------------------------------------------------
// Tokens
// ------------------------------------------------------------------------------------------------

const now = (): number => Math.floor(Date.now() / 1000);
const b64 = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');
const tokenOf = (t: Tenant): string => signToken({ tenant_id: UUID[t], user_id: `user-${t}`, role: 'member' });

/** A valid token whose tenant_id claim is missing; the claims that name the victim must never become the tenant. */
const tenantlessToken = (victim: Tenant): string => signToken({ user_id: 'nobody', role: 'member', operator_id: UUID[victim], tenantId: UUID[victim], tenant: UUID[victim] });

/** `token` with its payload's tenant_id replaced, header and signature kept. */
function swapTenant(token: string, tenant: string): string {
  const [header, payload, signature] = token.split('.') as [string, string, string];
  const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Row;
  return [header, b64({ ...claims, tenant_id: tenant }), signature].join('.');
}

/** Forgeries that claim the victim's tenant; each must be a 401. */
const FORGERIES: readonly (readonly [string, (caller: Tenant, victim: Tenant) => string])[] = [
  ['signed with another secret', (_c, v) => signToken({ tenant_id: UUID[v], user_id: 'forger' }, 'not-the-gateway-secret-but-long-enough-0123456789')],
  ['alg none, unsigned', (_c, v) => `${b64({ alg: 'none', typ: 'JWT' })}.${b64({ tenant_id: UUID[v], iat: now() })}.`],
  ['expired an hour ago', (_c, v) => signToken({ tenant_id: UUID[v], exp: now() - 3600 })],
  ['not valid before an hour from now', (_c, v) => signToken({ tenant_id: UUID[v], nbf: now() + 3600 })],
  ['HS512, an algorithm the gateway does not accept', (_c, v) => signToken({ tenant_id: UUID[v] }, TEST_JWT_SECRET, { algorithm: 'HS512' })],
  ["the caller's token with tenant_id swapped in the payload, not re-signed", (c, v) => swapTenant(tokenOf(c), UUID[v])],
];

// ------------------------------------------------------------------------------------------------
// Checks
// ------------------------------------------------------------------------------------------------

/** Every `tenant_id` value anywhere in a JSON value (rows, expanded objects, nested arrays). */
function tenantIdsIn(value: unknown, out: unknown[] = []): unknown[] {
  if (Array.isArray(value)) for (const v of value) tenantIdsIn(v, out);
  else if (value !== null && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      if (k === 'tenant_id') out.push(v);
      tenantIdsIn(v, out);
    }
  }
  return out;
}

/** What a request carries, as text: its path, its body and the decoded payload of its cursor (EXPLAIN shows a cursor's values). */
function sentText(req: Req): string {
  const cursor = new URL(req.path, 'http://x').searchParams.get('cursor');
  const payload = cursor === null ? '' : Buffer.from(cursor.split('.')[0] ?? '', 'base64url').toString('utf8');
  return [decodeURIComponent(req.path), payload, req.body === undefined ? '' : JSON.stringify(req.body)].join('\n');
}

/** No tenant but the caller appears in an answer: not as a tenant_id, not as a uuid in the text (unless the request sent it). */
function expectOnlyCallers(res: Response, req: Req, caller: Tenant): void {
  expect(tenantIdsIn(res.body).filter((id) => id !== UUID[caller]).map(nameOf)).toEqual([]);
  const sent = sentText(req);
  const leaked = TENANTS.filter((t) => t !== caller && !sent.includes(UUID[t]) && res.text.includes(UUID[t]));
  expect(leaked).toEqual([]);
}

function expectRows(t: TableSpec, actual: unknown, expected: Row[]): void {
  if (t.key.length) return expect(actual).toEqual(expected);
  const sorted = (rows: unknown) => (rows as Row[]).map((r) => JSON.stringify(r)).sort();
  return expect(sorted(actual)).toEqual(sorted(expected));
}

type PlanNode = { 'Relation Name'?: string; 'Actual Rows'?: number; 'Actual Loops'?: number; Plans?: PlanNode[] };
const planNodes = (node: PlanNode): PlanNode[] => [node, ...(node.Plans ?? []).flatMap(planNodes)];

/** Rows produced by each scan of `relation` in an EXPLAIN ANALYZE plan (over all loops). */
function scannedRows(res: Response, relation: string): number[] {
  const plan = (res.body as { data: { plan: { Plan: PlanNode }[] } }).data.plan;
  return planNodes(plan[0]!.Plan)
    .filter((n) => n['Relation Name'] === relation)
    .map((n) => Math.round((n['Actual Rows'] ?? 0) * (n['Actual Loops'] ?? 1)));
}

function expectStatus(res: Response, status: number, code?: string): void {
  expect({ status: res.status, code: (res.body as Row | undefined)?.code }).toEqual({ status, code });
}

/** Runs `fn`, prefixing a failure with `label` (attack or control). */
async function step<T>(label: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof Error) {
      err.message = `[${label}] ${err.message}`;
      err.stack = `[${label}] ${err.stack ?? ''}`;
    }
    throw err;
  }
}

/** Mints a cursor as `owner` on its own orders: the first page of one row, sorted by `sort`. */
async function mintCursor(owner: Tenant, sort: string): Promise<{ cursor: string; first: Row }> {
  const res = await send(GET(`/api/orders?sort=${encodeURIComponent(sort)}&select=id,tenant_id&limit=1`), tokenOf(owner), owner);
  expect(res.status).toBe(200);
  const first = (res.body.data as Row[])[0]!;
  expect(first.tenant_id).toBe(UUID[owner]);
  expect(typeof res.body.next_cursor).toBe('string');
  return { cursor: res.body.next_cursor as string, first };
}

// ------------------------------------------------------------------------------------------------
// List cases: a query string aimed at a target, and the SQL condition it means
// ------------------------------------------------------------------------------------------------

interface Query extends Cond {
  readonly query: string;
  /** ORDER BY of the expected rows (default: the key). */
  readonly order?: string;
  /** What count=exact counts when it differs from the condition (a cursor does not narrow the total). */
  readonly total?: Cond;
}

interface ListCase {
  readonly name: string;
  readonly table: TableSpec;
  /** Carries sort and cursor: not for distinct or aggregate. */
  readonly paged: boolean;
  build(aim: Aim): Promise<Query> | Query;
}

type Spelling = 'value-style' | 'key-style' | 'bare';

/** One filter in one spelling of docs/querying.md#filters, URL-encoded. */
function spell(spelling: Spelling, column: string, op: string, value: string | readonly string[]): string {
  const c = encodeURIComponent(column);
  const v = typeof value === 'string' ? value : value.join(',');
  if (op === 'is_null') return spelling === 'key-style' ? `${c}.is_null=${v}` : `${c}=${v === 'true' ? 'is_null' : 'is_null.false'}`;
  if (spelling === 'bare') return `${c}=${encodeURIComponent(v)}`;
  if (spelling === 'key-style') return `${c}.${op}=${encodeURIComponent(v)}`;
  return `${c}=${encodeURIComponent(`${op}.${op === 'in' ? `(${v})` : v}`)}`;
}

interface OperatorCase {
  readonly op: string;
  readonly table: string;
  readonly column: string;
  /** What the value designates, for the test name. */
  readonly aimsAt: string;
  readonly spellings?: readonly Spelling[];
  value(aim: Aim): { value: string | string[]; where: string; params: unknown[] };
}

const ordersOf = (t: Tenant): readonly number[] => facts[t].orders;
const byValue = (value: number, where: string) => ({ value: String(value), where, params: [value] });

/** Every operator, aimed at the target's data where the operator can be. */
const OPERATORS: readonly OperatorCase[] = [
  { op: 'eq', table: 'orders', column: 'tenant_id', aimsAt: "target's tenant_id", spellings: ['bare', 'value-style', 'key-style'], value: (a) => ({ value: UUID[a.target], where: 'tenant_id = $1', params: [UUID[a.target]] }) },
  { op: 'eq', table: 'orders', column: 'id', aimsAt: "target's first order id", value: (a) => byValue(ordersOf(a.target)[0]!, 'id = $1') },
  { op: 'ne', table: 'orders', column: 'tenant_id', aimsAt: "other's tenant_id (everything but the other's rows)", value: (a) => ({ value: UUID[a.other], where: 'tenant_id <> $1', params: [UUID[a.other]] }) },
  { op: 'gt', table: 'orders', column: 'id', aimsAt: "target's smallest order id - 1", value: (a) => byValue(Math.min(...ordersOf(a.target)) - 1, 'id > $1') },
  { op: 'gte', table: 'orders', column: 'id', aimsAt: "target's smallest order id", value: (a) => byValue(Math.min(...ordersOf(a.target)), 'id >= $1') },
  { op: 'lt', table: 'orders', column: 'id', aimsAt: "target's largest order id + 1", value: (a) => byValue(Math.max(...ordersOf(a.target)) + 1, 'id < $1') },
  { op: 'lte', table: 'orders', column: 'id', aimsAt: "target's largest order id", value: (a) => byValue(Math.max(...ordersOf(a.target)), 'id <= $1') },
  {
    op: 'in', table: 'orders', column: 'id', aimsAt: "five of target's order ids",
    value: (a) => { const ids = ordersOf(a.target).slice(0, 5); return { value: ids.map(String), where: 'id = ANY($1::bigint[])', params: [ids] }; },
  },
  { op: 'in', table: 'orders', column: 'tenant_id', aimsAt: "target's tenant_id", value: (a) => ({ value: [UUID[a.target]], where: 'tenant_id = ANY($1::uuid[])', params: [[UUID[a.target]]] }) },
  {
    op: 'like', table: 'orders', column: 'tenant_id', aimsAt: "the prefix of target's tenant_id",
    value: (a) => { const prefix = UUID[a.target].slice(0, 9); return { value: `${prefix}*`, where: 'tenant_id::text LIKE $1', params: [`${prefix}%`] }; },
  },
  {
    op: 'ilike', table: 'users', column: 'email', aimsAt: "target's e-mail domain, upper-cased",
    value: (a) => { const domain = facts[a.target].domain.toUpperCase(); return { value: `*@${domain}`, where: 'email ILIKE $1', params: [`%@${domain}`] }; },
  },
  { op: 'is_null', table: 'orders', column: 'notes', aimsAt: 'NULL notes (every tenant has some)', value: () => ({ value: 'true', where: 'notes IS NULL', params: [] }) },
  { op: 'is_null', table: 'orders', column: 'notes', aimsAt: 'non-NULL notes (every tenant has some)', value: () => ({ value: 'false', where: 'notes IS NOT NULL', params: [] }) },
  { op: 'contains', table: 'users', column: 'tags', aimsAt: "a tag of target's users", value: (a) => ({ value: facts[a.target].tag, where: 'tags @> ARRAY[$1::text]', params: [facts[a.target].tag] }) },
];

const operatorCases: ListCase[] = OPERATORS.flatMap((o) =>
  (o.spellings ?? (['value-style', 'key-style'] as const)).map(
    (spelling): ListCase => ({
      name: `${o.table}?${o.column} ${o.op} <${o.aimsAt}> (${spelling})`,
      table: spec(o.table),
      paged: false,
      build(aim) {
        const { value, where, params } = o.value(aim);
        return { query: spell(spelling, o.column, o.op, value), where, params };
      },
    }),
  ),
);

const rangeCase: ListCase = {
  name: "orders?tenant_id gte and lte <target's tenant_id> (a range, mixed spellings)",
  table: spec('orders'),
  paged: false,
  build: (a) => ({ query: `${spell('value-style', 'tenant_id', 'gte', UUID[a.target])}&${spell('key-style', 'tenant_id', 'lte', UUID[a.target])}`, where: 'tenant_id >= $1 AND tenant_id <= $1', params: [UUID[a.target]] }),
};

const searchCases: ListCase[] = [
  { name: `documents?search=${SHARED_WORD} (a word every tenant has)`, word: () => SHARED_WORD, columns: undefined },
  { name: "documents?search=<target's own word>", word: (a: Aim) => CODEWORD[a.target], columns: undefined },
  { name: "documents?search=<target's own word>&search_columns=body", word: (a: Aim) => CODEWORD[a.target], columns: 'body' },
].map(({ name, word, columns }) => ({
  name,
  table: spec('documents'),
  paged: false,
  build: (a: Aim): Query => ({
    query: `search=${encodeURIComponent(word(a))}${columns ? `&search_columns=${columns}` : ''}`,
    where: `to_tsvector(concat_ws(' ', ${columns ?? 'title, body'})) @@ websearch_to_tsquery($1)`,
    params: [word(a)],
  }),
}));

/** A cursor minted by the target on its own orders, presented by the caller. */
const cursorCases: ListCase[] = [
  { sort: 'id', order: 'id', after: (first: Row): Cond => ({ where: 'id > $1', params: [first.id] }) },
  { sort: '-id', order: 'id DESC', after: (first: Row): Cond => ({ where: 'id < $1', params: [first.id] }) },
  { sort: 'tenant_id', order: 'tenant_id, id', after: (first: Row): Cond => ({ where: '(tenant_id, id) > ($1::uuid, $2::bigint)', params: [first.tenant_id, first.id] }) },
].map(({ sort, order, after }) => ({
  name: `orders?sort=${sort}&cursor=<minted by target>`,
  table: spec('orders'),
  paged: true,
  async build(a: Aim): Promise<Query> {
    const { cursor, first } = await mintCursor(a.target, sort);
    return { query: `sort=${encodeURIComponent(sort)}&cursor=${encodeURIComponent(cursor)}`, ...after(first), order, total: ALL };
  },
}));

/** Every table, asked for both tenants' rows by tenant column. */
const everyTableCases: ListCase[] = TABLES.map((t) => ({
  name: `${t.name}?${t.tenantColumn}=in.(<target>,<other>)`,
  table: t,
  paged: false,
  build: (a: Aim): Query => ({
    query: spell('value-style', t.tenantColumn, 'in', [UUID[a.target], UUID[a.other]]),
    where: `${ident(t.tenantColumn)} = ANY($1::uuid[])`,
    params: [[UUID[a.target], UUID[a.other]]],
  }),
}));

const LIST_CASES: readonly ListCase[] = [...operatorCases, rangeCase, ...searchCases, ...cursorCases, ...everyTableCases];

// ------------------------------------------------------------------------------------------------
// Routes a list case runs on
// ------------------------------------------------------------------------------------------------

interface ListRoute {
  readonly name: string;
  applies(c: ListCase): boolean;
  /** The parent row of a child route, chosen with the control query (so the control has rows). */
  parent?(q: Query, caller: Tenant): Promise<number>;
  /** Runs `q` as the caller, checks the answer against db.admin, and returns how many of the caller's rows matched. */
  run(c: ListCase, q: Query, aim: Aim, parent: number | undefined): Promise<number>;
}

const LIST_ROUTES: readonly ListRoute[] = [
  {
    name: 'list',
    applies: () => true,
    async run(c, q, aim) {
      const req = GET(`${url(c.table)}?${q.query}&select=${selectOf(c.table.columns)}&count=exact&limit=${LIMIT}`);
      const res = await ask(req, aim);
      expect(res.status).toBe(200);
      expectOnlyCallers(res, req, aim.caller);
      const expected = await rowsOf(c.table, aim.caller, c.table.columns, q, q.order);
      expectRows(c.table, res.body.data, expected);
      expect(res.body.total).toBe(await countOf(c.table, aim.caller, q.total ?? q));
      return expected.length;
    },
  },
  {
    name: 'child GET /users/:id/orders',
    applies: (c) => c.table.name === 'orders',
    async parent(q, caller) {
      const { rows } = await db.admin.query(
        `SELECT user_id FROM orders WHERE tenant_id = $1 AND (${shift(q.where, 1)}) AND user_id IN (SELECT id FROM users WHERE tenant_id = $1)
         GROUP BY user_id ORDER BY count(*) DESC, user_id LIMIT 1`,
        [UUID[caller], ...q.params],
      );
      return Number((rows[0] as { user_id: number } | undefined)?.user_id ?? facts[caller].users[0]);
    },
    async run(c, q, aim, parent) {
      const req = GET(`/api/users/${parent}/orders?${q.query}&select=id,tenant_id&count=exact&limit=${LIMIT}`);
      const res = await ask(req, aim);
      expect(res.status).toBe(200);
      expectOnlyCallers(res, req, aim.caller);
      const expected = await rowsOf(c.table, aim.caller, ['id', 'tenant_id'], and(q, 'user_id', parent), q.order);
      expect(res.body.data).toEqual(expected);
      expect(res.body.total).toBe(await countOf(c.table, aim.caller, and(q.total ?? q, 'user_id', parent)));
      return expected.length;
    },
  },
  {
    name: 'distinct',
    applies: (c) => !c.paged,
    async run(c, q, aim) {
      const column = c.table.tenantColumn;
      const req = GET(`${url(c.table)}?${q.query}&distinct=${column}&count=exact&limit=${LIMIT}`);
      const res = await ask(req, aim);
      expect(res.status).toBe(200);
      expectOnlyCallers(res, req, aim.caller);
      const n = await countOf(c.table, aim.caller, q);
      expect(res.body.data).toEqual(n ? [{ [column]: UUID[aim.caller] }] : []);
      expect(res.body.total).toBe(n ? 1 : 0);
      return n;
    },
  },
  {
    name: 'aggregate count',
    applies: (c) => !c.paged,
    async run(c, q, aim) {
      const req = GET(`${url(c.table)}/aggregate?fn=count&${q.query}`);
      const res = await ask(req, aim);
      expect(res.status).toBe(200);
      const n = await countOf(c.table, aim.caller, q);
      expect(res.body.data).toEqual({ fn: 'count', value: n });
      return n;
    },
  },
  {
    name: 'aggregate sum',
    applies: (c) => !c.paged && c.table.name === 'orders',
    async run(c, q, aim) {
      const req = GET(`${url(c.table)}/aggregate?fn=sum&column=total&${q.query}`);
      const res = await ask(req, aim);
      expect(res.status).toBe(200);
      const { rows } = await db.admin.query(`SELECT to_json(sum(total))::text AS v FROM orders WHERE tenant_id = $1 AND (${shift(q.where, 1)})`, [UUID[aim.caller], ...q.params]);
      expect(res.body.data).toEqual({ fn: 'sum', column: 'total', value: JSON.parse((rows[0] as { v: string }).v) });
      return countOf(c.table, aim.caller, q);
    },
  },
  {
    name: 'explain',
    applies: () => true,
    async run(c, q, aim) {
      const req = GET(`${url(c.table)}/_explain?${q.query}&select=${selectOf(c.table.columns)}&limit=${LIMIT}`);
      const res = await ask(req, aim);
      expect(res.status).toBe(200);
      expectOnlyCallers(res, req, aim.caller);
      // ANALYZE ran the list statement: its scan of the table produced exactly the caller's matching rows.
      const n = await countOf(c.table, aim.caller, q);
      const scans = scannedRows(res, c.table.name);
      expect(scans.length).toBeGreaterThan(0);
      expect(scans).toEqual(scans.map(() => n));
      return n;
    },
  },
];

// ------------------------------------------------------------------------------------------------
// One row, child routes and expansions
// ------------------------------------------------------------------------------------------------

interface GetCase {
  readonly table: TableSpec;
  readonly expand?: string;
}
const GET_CASES: readonly GetCase[] = [
  ...TABLES.filter((t) => t.key.length > 0).map((t) => ({ table: t })),
  { table: spec('orders'), expand: 'user,nested:order_items,nested:order_tags' },
  { table: spec('users'), expand: 'user_profiles,nested:orders,nested:shipments!sender' },
];

interface ChildRelation {
  readonly parent: string;
  readonly child: string;
  readonly table: string;
  readonly fk: string;
}
const CHILD_RELATIONS: readonly ChildRelation[] = [
  { parent: 'users', child: 'orders', table: 'orders', fk: 'user_id' },
  { parent: 'orders', child: 'order_items', table: 'order_items', fk: 'order_id' },
  { parent: 'orders', child: 'order_tags', table: 'order_tags', fk: 'order_id' },
  { parent: 'users', child: 'shipments!sender', table: 'shipments', fk: 'sender_id' },
  { parent: 'users', child: 'shipments!recipient', table: 'shipments', fk: 'recipient_id' },
];

/** A parent row of `aim.target` with children of its own and the most children of the other tenant (planted). */
async function parentFor(r: ChildRelation, aim: Aim): Promise<{ id: number; own: number; foreign: number }> {
  const children = (tenant: string) => `(SELECT count(*)::int FROM ${ident(r.table)} c WHERE c.${ident(r.fk)} = p.id AND c.tenant_id = ${tenant})`;
  const { rows } = await db.admin.query(
    `SELECT p.id, ${children('$1')} AS own, ${children('$2')} AS foreign FROM ${ident(r.parent)} p WHERE p.tenant_id = $1 ORDER BY 2 > 0 DESC, 3 DESC, 2 DESC, 1 LIMIT 1`,
    [UUID[aim.target], UUID[aim.other]],
  );
  const row = rows[0] as { id: string | number; own: number; foreign: number };
  return { id: Number(row.id), own: row.own, foreign: row.foreign };
}

/**
 * A list or a row with expansions, and db.admin's mirror of it for the caller ($1 = caller's
 * tenant, $2 = anchor): related rows of the caller's tenant only. `reach` counts the victim's rows
 * the expansion would reach without RLS ($1 = caller, $2 = victim, $3 = anchor): planted, so > 0.
 */
interface ExpandCase {
  readonly name: string;
  path(anchor: number | undefined): string;
  /** An id of the caller's the request is about (a parent or a row). */
  anchor?(caller: Tenant): number;
  readonly single?: boolean;
  readonly mirror: string;
  readonly reach: string;
}

const userOf = (alias: string, fk: string) => `(SELECT to_json(u) FROM users u WHERE u.id = ${alias}.${fk} AND u.tenant_id = $1)`;
const nested = (table: string, fk: string, alias: string, order: string) =>
  `(SELECT coalesce(json_agg(c ORDER BY ${order}), '[]') FROM ${table} c WHERE c.${fk} = ${alias}.id AND c.tenant_id = $1)`;
const REACH_ORDER_RELATIONS = `
  (SELECT count(*) FROM orders o JOIN users u ON u.id = o.user_id WHERE o.tenant_id = $1 AND u.tenant_id = $2)
  + (SELECT count(*) FROM orders o JOIN order_items i ON i.order_id = o.id WHERE o.tenant_id = $1 AND i.tenant_id = $2)
  + (SELECT count(*) FROM orders o JOIN order_tags g ON g.order_id = o.id WHERE o.tenant_id = $1 AND g.tenant_id = $2)`;

const EXPAND_CASES: readonly ExpandCase[] = [
  {
    name: 'GET /orders?expand=user',
    path: () => `/api/orders?select=id,tenant_id&expand=user&limit=${LIMIT}`,
    mirror: `SELECT o.id, o.tenant_id, ${userOf('o', 'user_id')} AS "user" FROM orders o WHERE o.tenant_id = $1 ORDER BY o.id`,
    reach: 'SELECT count(*) FROM orders o JOIN users u ON u.id = o.user_id WHERE o.tenant_id = $1 AND u.tenant_id = $2',
  },
  {
    name: 'GET /shipments?expand=sender,recipient',
    path: () => `/api/shipments?select=id,tenant_id&expand=sender,recipient&limit=${LIMIT}`,
    mirror: `SELECT s.id, s.tenant_id, ${userOf('s', 'sender_id')} AS sender, ${userOf('s', 'recipient_id')} AS recipient FROM shipments s WHERE s.tenant_id = $1 ORDER BY s.id`,
    reach: 'SELECT count(*) FROM shipments s JOIN users u ON u.id IN (s.sender_id, s.recipient_id) WHERE s.tenant_id = $1 AND u.tenant_id = $2',
  },
  {
    name: 'GET /users?expand=user_profiles,nested:orders',
    path: () => `/api/users?select=id,tenant_id&expand=user_profiles,nested:orders&limit=${LIMIT}`,
    mirror: `SELECT u.id, u.tenant_id, (SELECT to_json(p) FROM user_profiles p WHERE p.user_id = u.id AND p.tenant_id = $1) AS user_profiles,
             ${nested('orders', 'user_id', 'u', 'c.id')} AS orders FROM users u WHERE u.tenant_id = $1 ORDER BY u.id`,
    reach: `SELECT (SELECT count(*) FROM users u JOIN user_profiles p ON p.user_id = u.id WHERE u.tenant_id = $1 AND p.tenant_id = $2)
                 + (SELECT count(*) FROM users u JOIN orders o ON o.user_id = u.id WHERE u.tenant_id = $1 AND o.tenant_id = $2)`,
  },
  {
    name: 'GET /orders?expand=user,nested:order_items,nested:order_tags',
    path: () => `/api/orders?select=id,tenant_id&expand=user,nested:order_items,nested:order_tags&limit=${LIMIT}`,
    mirror: `SELECT o.id, o.tenant_id, ${userOf('o', 'user_id')} AS "user", ${nested('order_items', 'order_id', 'o', 'c.id')} AS order_items,
             ${nested('order_tags', 'order_id', 'o', 'c.order_id, c.tag')} AS order_tags FROM orders o WHERE o.tenant_id = $1 ORDER BY o.id`,
    reach: `SELECT ${REACH_ORDER_RELATIONS}`,
  },
  {
    name: 'GET /users?expand=nested:shipments!sender,nested:shipments!recipient',
    path: () => `/api/users?select=id,tenant_id&expand=nested:shipments!sender,nested:shipments!recipient&limit=${LIMIT}`,
    mirror: `SELECT u.id, u.tenant_id, ${nested('shipments', 'sender_id', 'u', 'c.id')} AS "shipments!sender",
             ${nested('shipments', 'recipient_id', 'u', 'c.id')} AS "shipments!recipient" FROM users u WHERE u.tenant_id = $1 ORDER BY u.id`,
    reach: 'SELECT count(*) FROM users u JOIN shipments s ON u.id IN (s.sender_id, s.recipient_id) WHERE u.tenant_id = $1 AND s.tenant_id = $2',
  },
  {
    name: "child GET /users/<caller's first user>/orders?expand=user,nested:order_items",
    anchor: (caller) => facts[caller].users[0]!,
    path: (user) => `/api/users/${user}/orders?select=id,tenant_id&expand=user,nested:order_items&limit=${LIMIT}`,
    mirror: `SELECT o.id, o.tenant_id, ${userOf('o', 'user_id')} AS "user", ${nested('order_items', 'order_id', 'o', 'c.id')} AS order_items
             FROM orders o WHERE o.tenant_id = $1 AND o.user_id = $2 ORDER BY o.id`,
    reach: 'SELECT count(*) FROM orders o WHERE o.tenant_id = $2 AND o.user_id = $3',
  },
  {
    name: "GET /orders/<caller's first order>?expand=user,nested:order_items,nested:order_tags",
    anchor: (caller) => facts[caller].orders[0]!,
    single: true,
    path: (order) => `/api/orders/${order}?select=id,tenant_id&expand=user,nested:order_items,nested:order_tags`,
    mirror: `SELECT o.id, o.tenant_id, ${userOf('o', 'user_id')} AS "user", ${nested('order_items', 'order_id', 'o', 'c.id')} AS order_items,
             ${nested('order_tags', 'order_id', 'o', 'c.order_id, c.tag')} AS order_tags FROM orders o WHERE o.tenant_id = $1 AND o.id = $2`,
    reach: 'SELECT (SELECT count(*) FROM order_items WHERE order_id = $3 AND tenant_id = $2) + (SELECT count(*) FROM order_tags WHERE order_id = $3 AND tenant_id = $2)',
  },
  {
    name: "GET /users/<caller's first user>?expand=user_profiles,nested:orders,nested:shipments!sender",
    anchor: (caller) => facts[caller].users[0]!,
    single: true,
    path: (user) => `/api/users/${user}?select=id,tenant_id&expand=user_profiles,nested:orders,nested:shipments!sender`,
    mirror: `SELECT u.id, u.tenant_id, (SELECT to_json(p) FROM user_profiles p WHERE p.user_id = u.id AND p.tenant_id = $1) AS user_profiles,
             ${nested('orders', 'user_id', 'u', 'c.id')} AS orders, ${nested('shipments', 'sender_id', 'u', 'c.id')} AS "shipments!sender"
             FROM users u WHERE u.tenant_id = $1 AND u.id = $2`,
    reach: 'SELECT (SELECT count(*) FROM orders WHERE user_id = $3 AND tenant_id = $2) + (SELECT count(*) FROM shipments WHERE sender_id = $3 AND tenant_id = $2)',
  },
];

// ------------------------------------------------------------------------------------------------
// Writes: builders aimed at a target; the attack must change nothing, the control must be accepted
// ------------------------------------------------------------------------------------------------

interface Outcome {
  readonly status: number;
  readonly code?: string;
  /** The exact body, when it is known. */
  readonly body?: unknown;
  /** Whether the caller's rows change (only for the control; an attack never changes anything). */
  readonly writes?: boolean;
}
interface WriteCase {
  readonly name: string;
  build(aim: Aim): Promise<Req>;
  readonly attack: Outcome;
  readonly control: Outcome;
}

const FORBIDDEN: Outcome = { status: 403, code: 'FORBIDDEN' };
const NOT_FOUND: Outcome = { status: 404, code: 'NOT_FOUND' };
const CREATED: Outcome = { status: 201, writes: true };

const post = (t: TableSpec, body: unknown, headers?: Record<string, string>): Req => ({ method: 'post', path: `${url(t)}?returning=*`, body, ...(headers ? { headers } : {}) });
/** A new row of `tenant`'s that names its tenant explicitly. */
const newRow = (t: TableSpec, tenant: Tenant): Row => ({ ...t.insert!(facts[tenant], next()), [t.tenantColumn]: UUID[tenant] });
const pick = (row: Row, columns: readonly string[]): Row => Object.fromEntries(columns.map((c) => [c, row[c]]));
const upsertHeaders = (columns: readonly string[]) => ({ 'X-Upsert': 'true', 'X-On-Conflict': columns.join(',') });

function tableWriteCases(t: TableSpec): WriteCase[] {
  const cases: WriteCase[] = [];
  const tc = t.tenantColumn;
  if (t.insert) {
    cases.push(
      { name: `POST ${t.name}: one row with ${tc} = <target>`, build: async (a) => post(t, newRow(t, a.target)), attack: FORBIDDEN, control: CREATED },
      { name: `POST ${t.name}: batch [own row, row with ${tc} = <target>]`, build: async (a) => post(t, [newRow(t, a.caller), newRow(t, a.target)]), attack: FORBIDDEN, control: CREATED },
    );
  }
  if (t.upsertByKey) {
    const updates = Object.keys(t.change!(0)).some((c) => !t.key.includes(c));
    cases.push({
      name: `POST ${t.name}: upsert (X-Upsert) onto <target>'s primary key`,
      async build(a) {
        const row = await firstRow(t, a.target);
        return post(t, { ...t.insert?.(facts[a.target], next()), ...t.change!(next()), ...pick(row, t.key) }, upsertHeaders(t.key));
      },
      attack: FORBIDDEN,
      control: { status: 201, writes: updates },
    });
  }
  if (t.key.length && t.change) {
    const patchOf = async (owner: Tenant, body: Row): Promise<Req> => ({ method: 'patch', path: `${url(t)}/${keyPath(t, await firstRow(t, owner))}?returning=*`, body });
    cases.push(
      { name: `PATCH ${t.name}/<target's row>`, build: (a) => patchOf(a.target, t.change!(next())), attack: NOT_FOUND, control: { status: 200, writes: true } },
      { name: `PATCH ${t.name}/<target's row> claiming it: {${tc}: caller}`, build: (a) => patchOf(a.target, { [tc]: UUID[a.caller] }), attack: NOT_FOUND, control: { status: 200, writes: false } },
      { name: `PATCH ${t.name}/<caller's row> moving it: {${tc}: target}`, build: (a) => patchOf(a.caller, { [tc]: UUID[a.target] }), attack: FORBIDDEN, control: { status: 200, writes: false } },
    );
  }
  if (t.spare) {
    for (const returning of ['', '?returning=*']) {
      cases.push({
        name: `DELETE ${t.name}/<target's row>${returning}`,
        build: async (a) => ({ method: 'delete', path: `${url(t)}/${keyPath(t, await firstRow(t, a.target, { spare: true }))}${returning}` }),
        attack: NOT_FOUND,
        control: { status: returning ? 200 : 204, writes: true },
      });
    }
  }
  return cases;
}

const kv = spec('write_kv');
const items = spec('write_items');
const users = spec('users');

const WRITE_CASES: readonly WriteCase[] = [
  ...TABLES.flatMap(tableWriteCases),
  {
    name: "POST write_items: upsert by sku (X-On-Conflict: sku) onto <target>'s sku",
    build: async (a) => post(items, { sku: (await firstRow(items, a.target, { columns: ['sku'] })).sku, name: `Upsert ${next()}` }, upsertHeaders(['sku'])),
    attack: FORBIDDEN,
    control: CREATED,
  },
  {
    name: "POST users: upsert by email (X-On-Conflict: email) onto <target>'s e-mail",
    build: async (a) => post(users, { email: (await firstRow(users, a.target, { columns: ['email'] })).email, name: `Upsert ${next()}` }, upsertHeaders(['email'])),
    attack: FORBIDDEN,
    control: CREATED,
  },
  {
    name: "POST write_kv: Prefer resolution=merge-duplicates onto <target>'s key",
    build: async (a) => post(kv, { key: (await firstRow(kv, a.target)).key, value: `merged ${next()}` }, { Prefer: 'return=representation, resolution=merge-duplicates' }),
    attack: FORBIDDEN,
    control: CREATED,
  },
  {
    name: "POST write_kv: Prefer resolution=ignore-duplicates onto <target>'s key (skipped, nothing written)",
    build: async (a) => post(kv, { key: (await firstRow(kv, a.target)).key, value: `ignored ${next()}` }, { Prefer: 'resolution=ignore-duplicates' }),
    attack: { status: 201, body: { data: null } },
    control: { status: 201, body: { data: null }, writes: false },
  },
  {
    name: "POST write_items: ignore-duplicates by sku onto <target>'s sku (skipped, nothing written)",
    build: async (a) => post(items, { sku: (await firstRow(items, a.target, { columns: ['sku'] })).sku, name: `ignored ${next()}` }, { Prefer: 'resolution=ignore-duplicates', 'X-On-Conflict': 'sku' }),
    attack: { status: 201, body: { data: null } },
    control: { status: 201, body: { data: null }, writes: false },
  },
  {
    name: "POST write_kv: batch upsert [new own key, <target>'s key]",
    build: async (a) => post(kv, [{ key: `matrix-${next()}`, value: 'new' }, { key: (await firstRow(kv, a.target)).key, value: `batch ${next()}` }], { 'X-Upsert': 'true' }),
    attack: FORBIDDEN,
    control: CREATED,
  },
  {
    name: 'POST write_kv: upsert of a new key with tenant_id = <target>',
    build: async (a) => post(kv, { key: `matrix-${next()}`, value: 'new', tenant_id: UUID[a.target] }, { 'X-Upsert': 'true' }),
    attack: FORBIDDEN,
    control: CREATED,
  },
  {
    name: 'POST write_items: tenant_id twice in one object (the caller first, <target> last)',
    build: async (a) => post(items, `{"tenant_id":"${UUID[a.caller]}","sku":"matrix-${next()}","name":"Twice","tenant_id":"${UUID[a.target]}"}`),
    attack: FORBIDDEN,
    control: CREATED,
  },
];

// ------------------------------------------------------------------------------------------------
// Function calls (POST /rpc/...): RLS applies inside the function, as the caller
// ------------------------------------------------------------------------------------------------

interface RpcCase {
  readonly name: string;
  /** The request, aimed at `user` (a user id), by name, by position or as a scalar. */
  build(user: number): Req;
}

const rpc = (fn: string, body?: unknown): Req => ({ method: 'post', path: `/api/rpc/${fn}`, ...(body === undefined ? {} : { body }) });

/** orders_of_user(p_user_id) (fixture 040): SETOF orders of one user, as the caller sees them. */
const RPC_CASES: readonly RpcCase[] = [
  { name: "POST rpc/orders_of_user {\"p_user_id\": <user>} (named)", build: (user) => rpc('orders_of_user', { p_user_id: user }) },
  { name: 'POST rpc/orders_of_user [<user>] (positional)', build: (user) => rpc('orders_of_user', [user]) },
  { name: 'POST rpc/orders_of_user <user> (scalar)', build: (user) => rpc('orders_of_user', String(user)) },
];

const RPC_WRITE_CASES: readonly WriteCase[] = [
  {
    name: "POST rpc/set_order_notes (VOLATILE, UPDATE ... RETURNING) on <target>'s order",
    build: async (a) => rpc('set_order_notes', { p_order_id: ordersOf(a.target)[0], p_notes: `rpc ${next()}` }),
    attack: { status: 200, body: { data: [] } },
    control: { status: 200, writes: true },
  },
];

// ------------------------------------------------------------------------------------------------
// Token attacks: one request per route, aimed at the target (the victim)
// ------------------------------------------------------------------------------------------------

interface Probe {
  readonly route: string;
  readonly writes: boolean;
  build(aim: Aim): Promise<Req>;
  /** The answer to the target's own valid token (the request is well-formed and reaches data). */
  owner(res: Response, target: Tenant): void;
  /** The answer to a valid token without a tenant_id: no row of anybody, nothing written. */
  tenantless(res: Response): void;
}

const ownRows = (res: Response, target: Tenant): void => {
  expect(res.status).toBe(200);
  const data = (res.body as { data: unknown }).data;
  const ids = tenantIdsIn(data);
  expect(ids.length).toBeGreaterThan(0);
  expect(ids.filter((id) => id !== UUID[target]).map(nameOf)).toEqual([]);
};
const noRows = (res: Response): void => {
  expect(res.status).toBe(200);
  expect(res.body.data).toEqual([]);
};
const answers = (status: number, code?: string) => (res: Response) => expectStatus(res, status, code);

const PROBES: readonly Probe[] = [
  { route: 'list', writes: false, build: async (a) => GET(`/api/orders?${spell('value-style', 'tenant_id', 'in', [UUID[a.target], UUID[a.other]])}&select=id,tenant_id&count=exact&limit=${LIMIT}`), owner: ownRows, tenantless: (res) => { noRows(res); expect(res.body.total).toBe(0); } },
  { route: 'get', writes: false, build: async (a) => GET(`/api/orders/${ordersOf(a.target)[0]}?select=id,tenant_id`), owner: ownRows, tenantless: answers(404, 'NOT_FOUND') },
  { route: 'child', writes: false, build: async (a) => GET(`/api/users/${facts[a.target].users[0]}/orders?select=id,tenant_id&limit=${LIMIT}`), owner: ownRows, tenantless: answers(404, 'NOT_FOUND') },
  { route: 'expand', writes: false, build: async () => GET(`/api/users?select=id,tenant_id&expand=user_profiles,nested:orders&limit=${LIMIT}`), owner: ownRows, tenantless: noRows },
  { route: 'search', writes: false, build: async () => GET(`/api/documents?search=${SHARED_WORD}&select=id,tenant_id`), owner: ownRows, tenantless: noRows },
  { route: 'distinct', writes: false, build: async () => GET('/api/orders?distinct=tenant_id'), owner: ownRows, tenantless: noRows },
  {
    route: 'cursor', writes: false,
    build: async (a) => GET(`/api/orders?sort=id&select=id,tenant_id&limit=${LIMIT}&cursor=${encodeURIComponent((await mintCursor(a.target, 'id')).cursor)}`),
    owner: ownRows, tenantless: noRows,
  },
  {
    route: 'aggregate', writes: false, build: async () => GET('/api/orders/aggregate?fn=count'),
    owner: (res) => { expect(res.status).toBe(200); expect(res.body.data.value).toBeGreaterThan(0); },
    tenantless: (res) => expect([res.status, res.body.data]).toEqual([200, { fn: 'count', value: 0 }]),
  },
  {
    route: 'explain', writes: false, build: async () => GET(`/api/orders/_explain?select=id&limit=${LIMIT}`),
    owner: (res) => { expect(res.status).toBe(200); expect(Math.min(...scannedRows(res, 'orders'))).toBeGreaterThan(0); },
    tenantless: (res) => { expect(res.status).toBe(200); expect(Math.max(...scannedRows(res, 'orders'))).toBe(0); },
  },
  { route: 'create', writes: true, build: async (a) => post(items, newRow(items, a.target)), owner: answers(201), tenantless: answers(403, 'FORBIDDEN') },
  { route: 'batch', writes: true, build: async (a) => post(items, [newRow(items, a.target), newRow(items, a.target)]), owner: answers(201), tenantless: answers(403, 'FORBIDDEN') },
  {
    route: 'upsert', writes: true, build: async (a) => post(kv, { key: (await firstRow(kv, a.target)).key, value: `upsert ${next()}` }, { 'X-Upsert': 'true' }),
    owner: answers(201), tenantless: answers(403, 'FORBIDDEN'),
  },
  {
    route: 'patch', writes: true, build: async (a) => ({ method: 'patch', path: `/api/write_items/${(await firstRow(items, a.target)).id}`, body: { name: `patched ${next()}` } }),
    owner: answers(200), tenantless: answers(404, 'NOT_FOUND'),
  },
  {
    route: 'rpc', writes: false, build: async (a) => rpc('orders_of_user', { p_user_id: facts[a.target].users[0] }),
    owner: ownRows, tenantless: noRows,
  },
  {
    route: 'rpc (volatile)', writes: true, build: async (a) => rpc('set_order_notes', { p_order_id: ordersOf(a.target)[0], p_notes: `probe ${next()}` }),
    owner: ownRows, tenantless: noRows,
  },
  {
    route: 'delete', writes: true, build: async (a) => ({ method: 'delete', path: `/api/documents/${(await firstRow(spec('documents'), a.target, { spare: true })).id}` }),
    owner: answers(204), tenantless: answers(404, 'NOT_FOUND'),
  },
];

// ------------------------------------------------------------------------------------------------
// The matrix
// ------------------------------------------------------------------------------------------------

/** it.each over named cases, counted for the final check. */
function matrix<T extends unknown[]>(cases: readonly [string, ...T][], body: (...args: T) => Promise<void>): void {
  planned += cases.length;
  it.each(cases.map((c) => [...c]))('%s', async (...row: unknown[]) => {
    ran++;
    await body(...(row.slice(1) as T));
  });
}

describe.each(PAIRS)('caller %s, victim %s', (caller, victim) => {
  const attack = attackOf(caller, victim);
  const control = controlOf(caller, victim);

  describe('list routes: filters in every spelling, search, cursors, every table', () => {
    const cases = LIST_ROUTES.flatMap((route) => LIST_CASES.filter((c) => route.applies(c)).map((c): [string, ListRoute, ListCase] => [`${route.name}: ${c.name}`, route, c]));
    matrix(cases, async (route, c) => {
      const hostile = await c.build(attack);
      const own = await c.build(control);
      // The attack designates rows the victim really has.
      expect(await countOf(c.table, victim, hostile)).toBeGreaterThan(0);
      const parent = route.parent ? await route.parent(own, caller) : undefined;
      await step('attack', () => route.run(c, hostile, attack, parent));
      // The same request aimed at the caller's own data returns its rows: the attack's answer is not empty by accident.
      expect(await step('control', () => route.run(c, own, control, parent))).toBeGreaterThan(0);
    });
  });

  describe('GET /{table}/:id', () => {
    const cases = GET_CASES.map((g): [string, GetCase] => [`GET ${g.table.name}/<target's row>${g.expand ? `?expand=${g.expand}` : ''}`, g]);
    matrix(cases, async ({ table: t, expand }) => {
      const path = async (tenant: Tenant) => `${url(t)}/${keyPath(t, await firstRow(t, tenant))}?select=${selectOf(t.columns)}${expand ? `&expand=${expand}` : ''}`;
      const hostile = GET(await path(victim));
      const res = await ask(hostile, attack);
      expectStatus(res, 404, 'NOT_FOUND');
      expect(res.body).not.toHaveProperty('data');
      const own = GET(await path(caller));
      const mine = await ask(own, control);
      expect(mine.status).toBe(200);
      expect(mine.body.data[t.tenantColumn]).toBe(UUID[caller]);
      expectOnlyCallers(mine, own, caller);
    });
  });

  describe('child routes GET /{parent}/:id/{child}', () => {
    const cases = CHILD_RELATIONS.map((r): [string, ChildRelation] => [`GET ${r.parent}/<target's ${r.parent.slice(0, -1)}>/${r.child}`, r]);
    matrix(cases, async (r) => {
      const t = spec(r.table);
      const pathOf = (id: number) => `/api/${r.parent}/${id}/${r.child}?select=${selectOf(t.columns)}&count=exact&limit=${LIMIT}`;
      const theirs = await parentFor(r, attack);
      expect(theirs.own).toBeGreaterThan(0);
      expectStatus(await ask(GET(pathOf(theirs.id)), attack), 404, 'NOT_FOUND');
      // The caller's parent with the victim's planted children: only the caller's children are listed.
      const mine = await parentFor(r, control);
      expect(mine.foreign).toBeGreaterThan(0);
      const req = GET(pathOf(mine.id));
      const res = await ask(req, control);
      expect(res.status).toBe(200);
      expectOnlyCallers(res, req, caller);
      const expected = await rowsOf(t, caller, t.columns, { where: `${ident(r.fk)} = $1`, params: [mine.id] });
      expect(expected.length).toBeGreaterThan(0);
      expect(res.body.data).toEqual(expected);
      expect(res.body.total).toBe(expected.length);
    });
  });

  describe('expand and nested expand over planted cross-tenant references', () => {
    matrix(
      EXPAND_CASES.map((e): [string, ExpandCase] => [e.name, e]),
      async (e) => {
        const anchor = e.anchor?.(caller);
        // Every parameter is typed here, whether `reach` uses it or not.
        const typed = `SELECT $1::uuid, $2::uuid${anchor === undefined ? '' : ', $3::bigint'}`;
        const { rows } = await db.admin.query(`SELECT (${e.reach})::int AS n FROM (${typed}) AS params`, [UUID[caller], UUID[victim], ...(anchor === undefined ? [] : [anchor])]);
        expect((rows[0] as { n: number }).n).toBeGreaterThan(0);
        const req = GET(e.path(anchor));
        const res = await ask(req, attack);
        expect(res.status).toBe(200);
        expectOnlyCallers(res, req, caller);
        const expected = await adminJson(e.mirror, [UUID[caller], ...(anchor === undefined ? [] : [anchor])]);
        expect(expected.length).toBeGreaterThan(0);
        expect(res.body.data).toEqual(e.single ? expected[0] : expected);
      },
    );
  });

  describe('cursors', () => {
    matrix([["the caller's own cursor, edited to carry the target's tenant_id and id (signature kept)"]], async () => {
      const own = await mintCursor(caller, 'tenant_id');
      const theirs = await mintCursor(victim, 'tenant_id');
      const forged = `${b64([theirs.first.tenant_id, String(theirs.first.id)])}.${own.cursor.split('.')[1]}`;
      const hostile = GET(`/api/orders?sort=tenant_id&select=id,tenant_id&limit=${LIMIT}&cursor=${encodeURIComponent(forged)}`);
      expectStatus(await ask(hostile, attack), 400, 'PARSE_ERROR');
      const req = GET(`/api/orders?sort=tenant_id&select=id,tenant_id&limit=${LIMIT}&cursor=${encodeURIComponent(own.cursor)}`);
      const res = await ask(req, control);
      expect(res.status).toBe(200);
      expectOnlyCallers(res, req, caller);
      expect(res.body.data).toEqual(await rowsOf(spec('orders'), caller, ['id', 'tenant_id'], { where: 'id > $1', params: [own.first.id] }, 'id'));
    });
  });

  describe('function calls: RLS inside the function, as the caller', () => {
    matrix(
      RPC_CASES.map((c): [string, RpcCase] => [c.name, c]),
      async (c) => {
        const orders = spec('orders');
        for (const [aim, owner] of [[attack, victim], [control, caller]] as const) {
          const user = facts[owner].users[0]!;
          const byUser: Cond = { where: 'user_id = $1', params: [user] };
          // The victim has orders of this user (its own, or planted under the caller's user).
          expect(await countOf(orders, victim, byUser)).toBeGreaterThan(0);
          const req = c.build(user);
          const res = await ask(req, aim);
          await step(aim === attack ? 'attack' : 'control', async () => {
            expect(res.status).toBe(200);
            expectOnlyCallers(res, req, caller);
            const expected = await adminJson('SELECT * FROM orders WHERE tenant_id = $1 AND user_id = $2 ORDER BY id', [UUID[caller], user]);
            expect(res.body.data).toEqual(expected);
            if (aim === control) expect(expected.length).toBeGreaterThan(0);
          });
        }
      },
    );
    matrix([['POST rpc/order_stats (OUT parameters: count and sum over orders)']], async () => {
      const res = await ask(rpc('order_stats'), attack);
      expect(res.status).toBe(200);
      const { rows } = await db.admin.query('SELECT count(*)::int AS n, coalesce(sum(total), 0)::text AS s FROM orders WHERE tenant_id = $1', [UUID[caller]]);
      expect(res.body.data).toEqual({ order_count: rows[0].n, total_sum: Number(rows[0].s) });
    });
  });

  describe('writes: nothing of the victim changes', () => {
    matrix(
      [...WRITE_CASES, ...RPC_WRITE_CASES].map((w): [string, WriteCase] => [w.name, w]),
      async (w) => {
        const hostile = await w.build(attack);
        const before = await snapshot();
        const res = await ask(hostile, attack);
        await step('attack', async () => {
          expectStatus(res, w.attack.status, w.attack.code);
          if (w.attack.body !== undefined) expect(res.body).toEqual(w.attack.body);
          expectOnlyCallers(res, hostile, caller);
          // Byte-identical: no row of the victim (nor of anybody) changed, appeared or disappeared.
          expect(changed(before, await snapshot())).toEqual([]);
        });
        const own = await w.build(control);
        const ownBefore = await snapshot();
        const ownRes = await ask(own, control);
        await step('control', async () => {
          expectStatus(ownRes, w.control.status, w.control.code);
          if (w.control.body !== undefined) expect(ownRes.body).toEqual(w.control.body);
          expectOnlyCallers(ownRes, own, caller);
          const parts = changed(ownBefore, await snapshot());
          expect(parts.filter((p) => !p.endsWith(`/${caller}`))).toEqual([]);
          expect(parts.length > 0).toBe(w.control.writes ?? false);
        });
      },
    );
  });

  describe('forged tokens claiming the victim: 401 on every route, nothing changed', () => {
    const cases = PROBES.flatMap((p) => FORGERIES.map(([forgery, forge]): [string, Probe, (c: Tenant, v: Tenant) => string] => [`${p.route}: ${forgery}`, p, forge]));
    matrix(cases, async (p, forge) => {
      const req = await p.build(attack);
      const before = p.writes ? await snapshot() : undefined;
      const res = await send(req, forge(caller, victim), victim);
      expectStatus(res, 401, 'UNAUTHORIZED');
      expect(res.headers['www-authenticate']).toMatch(/^Bearer/);
      expect(res.body).not.toHaveProperty('data');
      if (before) expect(changed(before, await snapshot())).toEqual([]);
    });
  });

  describe('a valid token without tenant_id (extra claims and headers naming the victim): no rows, nothing changed', () => {
    matrix(
      PROBES.map((p): [string, Probe] => [p.route, p]),
      async (p) => {
        const req = await p.build(attack);
        const before = p.writes ? await snapshot() : undefined;
        const res = await send(req, tenantlessToken(victim), victim);
        p.tenantless(res);
        expect(tenantIdsIn(res.body)).toEqual([]);
        if (before) expect(changed(before, await snapshot())).toEqual([]);
      },
    );
  });

  describe("the same probes with the victim's own valid token are accepted (the probes are well-formed)", () => {
    matrix(
      PROBES.map((p): [string, Probe] => [p.route, p]),
      async (p) => {
        const req = await p.build(attack);
        const before = await snapshot();
        const res = await send(req, tokenOf(victim), caller);
        p.owner(res, victim);
        expect(changed(before, await snapshot()).filter((part) => !part.endsWith(`/${victim}`))).toEqual([]);
      },
    );
  });
});

describe('the matrix', () => {
  it(`ran every generated case (at least ${FLOOR})`, () => {
    expect(planned).toBeGreaterThanOrEqual(FLOOR);
    expect(ran).toBe(planned);
  });
});
