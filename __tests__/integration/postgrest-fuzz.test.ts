/**
 * Fuzz of the PostgREST dialect's grammar (docs/postgrest-dialect.md): seeded hostile reads built
 * from PostgREST's select, filter, logic-tree, order, paging and header syntax, mixed with broken
 * and hostile fragments (quotes, injection attempts, deep nesting, long and odd characters,
 * unknown names, operators and casts). Every answer must be a success or an error with
 * PostgREST's body `{code, message, details, hint}`: no 5xx other than 503/504, no stack trace or
 * gateway SQL in a body. Bounded: TABLEGATE_PGRST_FUZZ_COUNT requests (default 1500) or
 * TABLEGATE_PGRST_FUZZ_SECONDS (default 12), whichever comes first; the seed is printed.
 */
import http from 'node:http';
import { Rng } from '../support/hostile-requests';
import { pgrstTokenA, pgrstTokenB, type PostgrestApp, usePostgrestApp } from '../support/postgrest-app';

const seed = Number(process.env.TABLEGATE_PGRST_FUZZ_SEED ?? 0x9657);
const maxRequests = Number(process.env.TABLEGATE_PGRST_FUZZ_COUNT ?? 1500);
const budgetSeconds = Number(process.env.TABLEGATE_PGRST_FUZZ_SECONDS ?? 12);

let app: PostgrestApp;
usePostgrestApp({ statementTimeoutMs: 3000, devMode: true, explainRoles: ['member'] }, (a) => (app = a));

const tables = ['authors', 'books', 'shelves', 'book_shelves', 'events', 'author_bios'];
const badTables = ['nope', '"books"', 'pg_class', '../books', 'books/1', ''];
const columns = ['id', 'name', 'title', 'genre', 'pages', 'price', 'tags', 'meta', 'published', 'fts', 'seats', 'during', 'author_id', 'secret', 'nope', '"id"', 'x"y', 'count', '*'];
const embeds = ['authors', 'books', 'shelves', 'author_bios', 'events', 'authors!author_id', 'authors!books_editor_fkey', 'books!inner', 'books!author_id!inner', 'authors!nope', '...authors', '...books!author_id', 'a:authors', 'nope'];
const ops = ['eq', 'neq', 'gt', 'gte', 'lt', 'lte', 'like', 'ilike', 'match', 'imatch', 'in', 'is', 'isdistinct', 'fts', 'plfts', 'phfts', 'wfts', 'cs', 'cd', 'ov', 'sl', 'sr', 'nxr', 'nxl', 'adj', 'eq(any)', 'like(all)', 'fts(english)', 'fts(x;y)', 'fts(nonexist)', 'wfts(nonexist)', 'xx', 'not.eq', 'not.in', ''];
const values = [
  '1', '0', '-1', 'abc', '', 'null', 'not_null', 'true', '(1,2)', '("a,b",c)', '{1,2}', '{"a":1}', '[1,5)', '(', ')', '"', "'", "1'; DROP TABLE pgrst.books; --",
  '%', '*', '\\', '\u0000', '\u00e9\u4e2d', '9'.repeat(40), 'x'.repeat(3000), '$1', '::text', 'a.b.c', '((((((', '2024-01-01', '{{{{{{{1}}}}}}}',
];
const casts = ['', '::text', '::int', '::jsonb', '::regclass', '::text[]', '::', '::"x"'];
const aggs = ['', '.sum()', '.avg()', '.count()', '.max()', '.min()', '.median()', '.sum'];
const paths = ['', '->a', '->>lang', '->stats->reads', '->0', '->>', '->"a b"'];

function selectText(rng: Rng, depth: number): string {
  const n = rng.int(0, 4);
  const items: string[] = [];
  for (let i = 0; i < n; i++) {
    if (depth < 3 && rng.chance(0.25)) items.push(`${rng.pick(embeds)}(${selectText(rng, depth + 1)})`);
    else if (rng.chance(0.1)) items.push(rng.pick(['count()', 'c:count()', 'count()::text', '*', '', '(', ')', ',,', '...', '!!']));
    else if (rng.chance(0.5)) items.push(rng.pick(['id', 'name', 'title', 'genre', 'pages', 'meta->>lang', 'label', 'seats']));
    else items.push(`${rng.chance(0.2) ? 'al:' : ''}${rng.pick(columns)}${rng.pick(paths)}${rng.pick(casts)}${rng.pick(aggs)}`);
  }
  return items.join(rng.chance(0.9) ? ',' : ' ');
}

function tree(rng: Rng, depth: number): string {
  const n = rng.int(0, 3);
  const items: string[] = [];
  for (let i = 0; i < n; i++) {
    if (depth < 9 && rng.chance(0.3)) items.push(`${rng.chance(0.2) ? 'not.' : ''}${rng.pick(['and', 'or'])}${tree(rng, depth + 1)}`);
    else items.push(`${rng.pick(columns)}${rng.pick(paths)}.${rng.pick(ops)}.${rng.pick(values)}`);
  }
  return `(${items.join(',')})`;
}

function request(rng: Rng): { path: string; headers: Record<string, string>; method: string } {
  const q = new URLSearchParams();
  if (rng.chance(0.7)) q.append('select', selectText(rng, 0));
  for (let i = rng.int(0, 4); i > 0; i--) {
    const prefix = rng.chance(0.2) ? `${rng.pick(['books', 'authors', 'shelves', 'nope'])}.` : '';
    const r = rng.next();
    if (r < 0.5) q.append(`${prefix}${rng.pick(columns)}${rng.pick(paths)}`, `${rng.pick(ops)}.${rng.pick(values)}`);
    else if (r < 0.7) q.append(`${prefix}${rng.pick(['or', 'and', 'not.or', 'not.and'])}`, tree(rng, 0));
    else if (r < 0.85) q.append(`${prefix}order`, `${rng.pick(columns)}${rng.pick(paths)}${rng.pick(['', '.asc', '.desc', '.desc.nullslast', '.nullsfirst', '.x'])}${rng.chance(0.2) ? `,${rng.pick(embeds)}(${rng.pick(columns)})` : ''}`);
    else q.append(`${prefix}${rng.pick(['limit', 'offset'])}`, rng.pick(['0', '1', '2', '-1', 'x', '99999999999', '1.5']));
  }
  const headers: Record<string, string> = { authorization: `Bearer ${rng.chance(0.5) ? pgrstTokenA : pgrstTokenB}` };
  if (rng.chance(0.3)) headers['accept'] = rng.pick(['application/json', 'text/csv', 'application/vnd.pgrst.object+json', 'application/vnd.pgrst.plan+json; options=analyze', 'application/vnd.pgrst.plan; options=x', 'application/geo+json', 'image/png', '*/*', ';;;', 'application/vnd.pgrst.array+json;nulls=stripped']);
  if (rng.chance(0.2)) headers['prefer'] = rng.pick(['count=exact', 'count=planned', 'count=estimated', 'count=bogus, handling=strict', 'return=minimal', '']);
  if (rng.chance(0.15)) headers['range'] = rng.pick(['0-1', '5-2', '1-', 'x', '0-99999999999999', '-5']);
  if (rng.chance(0.1)) headers['accept-profile'] = rng.pick(['pgrst', 'pgrst_alt', 'public', 'pg_catalog', '']);
  const method = rng.chance(0.9) ? 'GET' : rng.pick(['HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'PURGE']);
  return { path: `/rest/v1/${rng.chance(0.95) ? rng.pick(tables) : rng.pick(badTables)}?${q.toString()}`, headers, method };
}

const leaks = /json_agg\(|json_build_object\(|LATERAL|set_config\(|\n\s+at |\.ts:\d+|\.js:\d+|node_modules|RangeError|TypeError/;

it(`hostile PostgREST-grammar reads never give a 500, a leak or another error body (seed ${seed})`, async () => {
  const base = new URL(app.url);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
  const rng = new Rng(seed);
  const deadline = Date.now() + budgetSeconds * 1000;
  const problems: string[] = [];
  const statuses = new Map<number, number>();
  let sent = 0;
  const one = async (): Promise<void> => {
    while (sent < maxRequests && Date.now() < deadline) {
      const index = sent++;
      const req = request(rng);
      const res = await new Promise<{ status: number; body: string; type: string }>((resolve, reject) => {
        const out = http.request({ host: base.hostname, port: base.port, agent, method: req.method, path: req.path, headers: req.headers }, (r) => {
          const chunks: Buffer[] = [];
          r.on('data', (c: Buffer) => chunks.push(c));
          r.on('end', () => resolve({ status: r.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), type: String(r.headers['content-type'] ?? '') }));
          r.on('error', reject);
        });
        out.on('error', reject);
        out.end(req.method === 'POST' || req.method === 'PATCH' || req.method === 'PUT' ? '{}' : undefined);
      });
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      const where = `#${index} ${req.method} ${req.path.slice(0, 300)}`;
      if (res.status >= 500 && res.status !== 503 && res.status !== 504) problems.push(`${where}: ${res.status} ${res.body.slice(0, 300)}`);
      else if (res.status >= 400 && req.method !== 'HEAD') {
        let body: Record<string, unknown> | undefined;
        try {
          body = JSON.parse(res.body) as Record<string, unknown>;
        } catch {
          problems.push(`${where}: error body is not JSON`);
        }
        if (body && Object.keys(body).sort().join() !== 'code,details,hint,message') problems.push(`${where}: error body keys ${Object.keys(body).join()}`);
        if (leaks.test(res.body)) problems.push(`${where}: leak ${res.body.slice(0, 300)}`);
      }
    }
  };
  await Promise.all([one(), one(), one(), one()]);
  agent.destroy();
  console.log(`postgrest fuzz seed ${seed}: ${sent} requests, statuses ${JSON.stringify(Object.fromEntries([...statuses].sort()))}`);
  expect(problems.slice(0, 20)).toEqual([]);
}, 60000);

/**
 * Two shapes the random reads above also draw, each checked here for its exact answer: an unknown
 * text search configuration (`fts(nonexist)`) and an array nested deeper than PostgreSQL's 6
 * levels (SQLSTATE 54000), in a filter, a body and a function's argument. Both are the caller's
 * values: 400, never 500 (docs/postgrest-dialect.md, "Errors").
 */
describe('request values PostgreSQL refuses are 400, not 500', () => {
  const deep = '{{{{{{{1}}}}}}}';
  const send = (method: string, path: string, body?: unknown, token = pgrstTokenA) =>
    fetch(`${app.url}${path}`, { method, headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' }, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });

  beforeAll(async () => {
    await app.db.admin.query('CREATE FUNCTION pgrst.count_tags(t text[]) RETURNS integer LANGUAGE sql IMMUTABLE AS $$ SELECT cardinality(t) $$; GRANT EXECUTE ON FUNCTION pgrst.count_tags(text[]) TO tablegate_app');
    await app.gateway.reloadSchema();
  });

  it.each([
    ['an unknown text search configuration (filter)', 'GET', '/books?title=fts(nonexist).secret', '42704'],
    ['an unknown text search configuration (tsvector column)', 'GET', '/books?fts=wfts(nonexist).engine', '42704'],
    ['an unknown text search configuration (PATCH filter)', 'PATCH', '/books?title=plfts(nonexist).x', '42704'],
    ['an array nested 7 levels (filter)', 'GET', `/books?tags=cs.${deep}`, '54000'],
    ['an array nested 7 levels (body)', 'POST', '/books', '54000'],
    ['an array nested 7 levels (function argument, GET)', 'GET', `/rpc/count_tags?t=${deep}`, '54000'],
    ['an array nested 7 levels (function argument, POST)', 'POST', '/rpc/count_tags', '54000'],
  ])('%s', async (_name, method, path, code) => {
    const nested = [[[[[[['a']]]]]]];
    const body = method === 'PATCH' ? { pages: 1 } : path === '/books' ? { id: 900, title: 't', author_id: 1, genre: 'fiction', tags: nested } : path === '/rpc/count_tags' ? { t: nested } : undefined;
    for (const token of [pgrstTokenA, pgrstTokenB]) {
      const res = await send(method, path, body, token);
      const json = (await res.json()) as { code: string; message: string };
      expect({ status: res.status, code: json.code }).toEqual({ status: 400, code });
      expect(json.message).not.toMatch(leaks);
    }
  });
});
