/**
 * Hostile HTTP requests for the fuzz test (__tests__/integration/fuzz.test.ts), generated from a
 * seed: the n-th request of a seed is always the same, whatever answered the ones before.
 * In: a seeded PRNG and the catalog of the fixture schema (tables, columns, keys, functions,
 * tokens). Out: one request at a time over every route of the gateway, mixing huge counts
 * (sort keys, filters, select, expand, in lists, search phrases), deep JSON, unicode, NUL and
 * control characters, invalid UTF-8 escapes, SQL-ish text, odd types, bad headers, duplicate
 * parameters, long names and random operators.
 * Never: produces a request Node's HTTP client refuses to send (raw control characters in the
 * path or in a header): everything hostile is percent-encoded in URLs and kept to Latin-1 in
 * header values.
 */

export interface FuzzTable {
  readonly name: string;
  readonly columns: readonly { readonly name: string; readonly type: string }[];
  readonly primaryKey: readonly string[];
  /** Tables with a foreign key to this one (child routes, `nested:` expansions). */
  readonly referencedBy: readonly string[];
}

export interface FuzzFunction {
  readonly name: string;
  readonly schema: string;
  readonly args: readonly { readonly name: string; readonly type: string }[];
}

export interface FuzzCatalog {
  readonly tables: readonly FuzzTable[];
  readonly functions: readonly FuzzFunction[];
  /** Valid bearer tokens (the usual callers). */
  readonly goodTokens: readonly string[];
  /** Tokens that must be refused or that carry hostile claims. */
  readonly badTokens: readonly string[];
}

export interface FuzzRequest {
  /** The route family, for the histogram. */
  readonly route: string;
  readonly method: string;
  /** Path and query, already percent-encoded (possibly with deliberately invalid escapes). */
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: Buffer;
}

/** mulberry32: a small, fast, seedable 32-bit PRNG. */
export class Rng {
  private state: number;
  constructor(seed: number) {
    this.state = seed >>> 0;
  }
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)]!;
  }
  /** A count that is usually small and sometimes far over every cap. */
  count(small: number, huge: number): number {
    const r = this.next();
    if (r < 0.8) return this.int(0, small);
    if (r < 0.95) return this.int(small, small * 4);
    return this.int(small * 4, huge);
  }
}

const texts = [
  '', ' ', 'a', 'paid', 'shipped', 'alice', '1', '0', '-1', '1.5', '1e309', '-0', 'NaN', 'Infinity', '-Infinity',
  '9223372036854775808', '-9223372036854775809', '2147483648', '0x1F', '1_000', 'true', 'false', 'null', 'NULL',
  '2024-01-01', '2024-13-45T99:99', 'epoch', 'infinity', '11111111-1111-4111-8111-111111111111', 'not-a-uuid',
  "'", '"', "''", '""', ';', '--', '/*', '*/', '\\', "' OR '1'='1", '1; DROP TABLE orders; --', "'); DELETE FROM users; --",
  '$1', '$$', 'E\'\\n\'', ':', '.', ',', '(', ')', '()', '(,)', '*', '**', '%', '_', 'in.(1,2)', 'eq.', 'is_null',
  '{}', '{1,2}', '{{1}}', '{"a":1}', '[1]', '[[[[[[[1]]]]]]]', 'ü', 'naïve', '🙂', '\u202e', '\ufeff', '\u0000',
  '\u0001\u001f', '\r\n', '\t', 'a\u0000b', '\ud800', '\udfff\ud800', '👨‍👩‍👧', 'ＳＥＬＥＣＴ', 'Robert"); --',
  'gift wrap', '"big order"', '-gift or wrap', '!!(', '<->', '&&', '|', 'a:*', 'a & !b',
  '__proto__', 'constructor', 'hasOwnProperty', 'a[b][c]', 'status[]', 'tags[0]', 'toString',
];
/** Raw, possibly invalid, percent-escapes and separators spliced into a URL as they are. */
const rawEscapes = ['%00', '%C3%28', '%FF', '%ED%A0%80', '%E2%82', '%F0%9F', '%', '%zz', '%%', '+', '%2B', '%26', '%3D', '&', '=', '%0A', '%0D%0A', '%7F', '%C0%AF'];
const operators = ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'in', 'like', 'ilike', 'is_null', 'contains'];
const junkOperators = ['neq', 'cs', 'cd', 'ov', 'fts', 'not', 'not.eq', 'or', 'and', 'EQ', '', '..', 'eq.eq', 'gt.', 'is', 'match', 'imatch', 'sl', 'adj'];
const reserved = ['select', 'sort', 'limit', 'offset', 'cursor', 'distinct', 'search', 'search_columns', 'count', 'expand'];
const writeHeaders = ['x-upsert', 'x-on-conflict', 'prefer', 'x-gw-result-format'];

export function createHostileRequests(rng: Rng, catalog: FuzzCatalog): () => FuzzRequest {
  const routes: [string, number, () => FuzzRequest][] = [
    ['list', 18, list],
    ['get', 7, get],
    ['child', 7, child],
    ['aggregate', 7, aggregate],
    ['explain', 5, explain],
    ['insert', 9, insert],
    ['batch', 5, batch],
    ['upsert', 5, upsert],
    ['patch', 7, patch],
    ['delete', 5, del],
    ['rpc', 14, rpc],
    ['contracts', 3, contracts],
    ['junk', 8, junk],
  ];
  const total = routes.reduce((sum, [, weight]) => sum + weight, 0);
  // Half the requests use only real tables, columns and operators (the values stay hostile), so
  // that they get past parse and reach PostgreSQL; the other half are hostile throughout.
  let plausible = false;
  // A third of the hostile half splices raw, possibly invalid, escapes into its URL.
  let mangle = false;
  // A third of the plausible half is also huge: far more sort keys, filters, in items, select
  // names or search words than any cap allows, or JSON arrays nested past PostgreSQL's 6
  // dimensions, all of them valid names and values, so they reach PostgreSQL without the caps.
  let huge = false;
  return () => {
    plausible = rng.chance(0.5);
    mangle = !plausible && rng.chance(0.3);
    huge = plausible && rng.chance(0.33);
    let r = rng.next() * total;
    for (const [, weight, make] of routes) {
      r -= weight;
      if (r < 0) return make();
    }
    return routes[0]![2]();
  };

  // ---- values and names ----

  function text(): string {
    const r = rng.next();
    if (r < 0.75) return rng.pick(texts);
    if (r < 0.85) return rng.pick(texts) + rng.pick(texts);
    if (r < 0.95) return rng.pick(['x', 'é', '🙂', "'", ' ', 'ab']).repeat(rng.int(100, 3000));
    return String.fromCharCode(...Array.from({ length: rng.int(1, 20) }, () => rng.int(0, 0xffff)));
  }

  /** Percent-encodes, keeping a lone surrogate (which encodeURIComponent refuses) as an invalid escape. */
  function enc(s: string): string {
    let out = '';
    for (const ch of s) {
      try {
        out += encodeURIComponent(ch);
      } catch {
        out += '%ED%A0%80';
      }
    }
    return mangle && rng.chance(0.1) ? splice(out, rng.pick(rawEscapes)) : out;
  }

  function splice(s: string, insert: string): string {
    const at = rng.int(0, s.length);
    return s.slice(0, at) + insert + s.slice(at);
  }

  function table(): FuzzTable {
    return rng.pick(catalog.tables);
  }

  function columnName(t: FuzzTable): string {
    const r = plausible ? 0 : rng.next();
    if (r < 0.75 && t.columns.length) return rng.pick(t.columns).name;
    if (r < 0.85) return rng.pick(reserved);
    if (r < 0.9) return 'c'.repeat(rng.int(64, 2000));
    return text();
  }

  function tableName(): string {
    const r = plausible ? 0 : rng.next();
    if (r < 0.85) return enc(table().name);
    if (r < 0.9) return rng.pick(['rpc', '_rpc', 'aggregate', '_explain', '..', '.', '%2F', '%2e%2e', 'pg_catalog.pg_class', 'public.orders']);
    return enc(text()) || 'x';
  }

  function id(t: FuzzTable): string {
    const r = plausible ? 0 : rng.next();
    const one = (): string => (plausible || rng.chance(0.7) ? String(rng.int(plausible ? 1 : -2, 210)) : enc(text()));
    if (r < 0.8) return Array.from({ length: Math.max(1, t.primaryKey.length) }, one).join(',');
    if (r < 0.9) return Array.from({ length: rng.int(0, 5) }, one).join(',');
    return enc(text()) || '0';
  }

  function listOf(count: number, item: () => string): string {
    return Array.from({ length: count }, item).join(',');
  }

  // ---- query strings ----

  /** A value the column's type accepts; text columns get hostile text, which they accept too. */
  function typedValue(type: string, short = false): string {
    if (type.endsWith('[]')) return rng.pick(['{vip}', '{}', '{beta,vip}']);
    if (/^(integer|bigint|smallint|numeric|real|double)/.test(type)) return String(rng.int(-1, 250));
    if (type === 'uuid') return rng.pick(['11111111-1111-4111-8111-111111111111', '22222222-2222-4222-8222-222222222222']);
    if (type.startsWith('timestamp') || type === 'date') return rng.pick(['2024-03-01', '2024-06-30T12:00:00Z']);
    if (type === 'boolean') return rng.pick(['true', 'false']);
    if (type === 'jsonb' || type === 'json') return rng.pick(['{}', '{"theme":"dark"}']);
    return short ? rng.pick(['paid', 'a', 'x y', 'ü']) : text().replace(/\u0000/g, '');
  }

  function filter(t: FuzzTable): [string, string] {
    if (plausible && t.columns.length && rng.chance(0.7)) {
      const c = rng.pick(t.columns);
      const op = c.type.endsWith('[]') ? rng.pick(['contains', 'is_null']) : rng.pick(['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'in', 'is_null', ...(/text|char/.test(c.type) ? ['like', 'ilike'] : [])]);
      const items = huge && rng.chance(0.3) ? rng.int(900, 3000) : rng.int(0, 5);
      const value = op === 'in' ? `(${listOf(items, () => `"${typedValue(c.type, items > 5).replace(/"/g, '""')}"`)})` : op === 'is_null' ? rng.pick(['true', 'false']) : typedValue(c.type);
      return rng.chance(0.5) ? [`${c.name}.${op}`, value] : [c.name, `${op}.${value}`];
    }
    const column = columnName(t);
    const op = plausible || rng.chance(0.85) ? rng.pick(operators) : rng.chance(0.5) ? rng.pick(junkOperators) : text();
    let value: string;
    if (op === 'in') {
      const n = rng.count(5, 3000);
      const items = listOf(n, () => (rng.chance(0.7) ? String(rng.int(-5, 300)) : `"${text().replace(/"/g, '""')}"`));
      value = rng.chance(0.8) ? `(${items})` : items;
    } else if (op === 'is_null') value = rng.pick(['true', 'false', 'maybe', '', '1']);
    else value = plausible && rng.chance(0.5) ? rng.pick(['1', '42', 'paid', 'gift*', '2024-03-01', 'true', '{vip}', '11111111-1111-4111-8111-111111111111']) : text();
    return rng.chance(0.5) ? [`${column}.${op}`, value] : [column, rng.chance(0.1) ? value : `${op}.${value}`];
  }

  function reservedParameter(t: FuzzTable, name: string): [string, string] {
    switch (name) {
      case 'select':
      case 'search_columns':
        return [name, rng.chance(0.1) ? '*' : listOf(rng.count(4, 2500), () => (rng.chance(0.1) ? `"${columnName(t)}"` : columnName(t)))];
      case 'sort':
        return [name, listOf(rng.count(3, 400), () => rng.pick(['', '-', '', '']) + columnName(t) + rng.pick(['', '', ':asc', ':desc', ':up', ':']))];
      case 'limit':
      case 'offset':
        return [name, rng.chance(0.5) ? String(rng.int(0, 2000)) : rng.pick(['-1', '1e3', 'NaN', '99999999999999999999', '1.5', '0x10', '', ' 1', text()])];
      case 'cursor':
        return [name, rng.chance(0.5) ? Buffer.from(text()).toString('base64url') + '.' + Buffer.from(text()).toString('base64url') : text()];
      case 'distinct':
        return [name, columnName(t)];
      case 'search':
        return [name, rng.chance(0.15) ? `"${Array.from({ length: rng.count(50, 20000) }, () => rng.pick(['word', 'gift', 'a-b-c', 'x'])).join(' ')}"` : text()];
      case 'count':
        return [name, rng.pick(['exact', 'planned', '', 'EXACT', text()])];
      default:
        return [name, listOf(rng.count(3, 300), () => (rng.chance(0.3) ? 'nested:' : '') + (rng.chance(0.7) ? rng.pick(catalog.tables).name : columnName(t)))];
    }
  }

  /** A reserved parameter with a value the route accepts (for the plausible half). */
  function saneParameter(t: FuzzTable, name: string): [string, string] | undefined {
    const column = (): string => (t.columns.length ? rng.pick(t.columns).name : 'id');
    switch (name) {
      case 'select':
        return [name, listOf(huge ? rng.int(1000, 2500) : rng.int(1, 4), column)];
      case 'sort':
        return [name, listOf(huge ? rng.int(30, 150) : rng.int(1, 3), () => `${rng.pick(['', '-'])}${column()}`)];
      case 'limit':
      case 'offset':
        return [name, String(rng.int(0, 50))];
      case 'search':
        if (huge) return [name, `${rng.pick(['"', ''])}${Array.from({ length: rng.int(100, 30000) }, () => rng.pick(['word', 'gift', 'a-b-c', 'x'])).join(' ')}"`];
        return [name, text().replace(/\u0000/g, '').slice(0, 200)];
      case 'count':
        return [name, 'exact'];
      default:
        return undefined;
    }
  }

  function readQuery(t: FuzzTable, names: readonly string[] = reserved, takesFilters = true): string {
    const pairs: [string, string][] = [];
    const filters = plausible && (!takesFilters || rng.chance(0.9)) ? (takesFilters ? rng.int(0, 3) : 0) : rng.count(3, 1500);
    for (let i = 0; i < filters; i++) pairs.push(filter(t));
    if (takesFilters && huge && rng.chance(0.25) && t.columns.length) {
      // Thousands of short, valid filters (the 25,000-filter URL of the issue).
      const c = rng.pick(t.columns).name;
      for (let i = rng.int(90, 40000); i > 0; i--) pairs.push([c, 'eq.1']);
    }
    for (const name of names) {
      if (!rng.chance(huge ? 0.5 : 0.3)) continue;
      const sane = plausible && rng.chance(0.8) ? saneParameter(t, name) : reservedParameter(t, name);
      if (sane) pairs.push(sane);
    }
    // Duplicates of a parameter already present.
    if (pairs.length && rng.chance(plausible ? 0.02 : 0.1)) pairs.push(rng.pick(pairs));
    return query(pairs);
  }

  function query(given: readonly (readonly [string, string])[]): string {
    if (given.length === 0) return rng.chance(0.05) ? '?' : '';
    const pairs = [...given];
    for (let i = pairs.length - 1; i > 0; i--) {
      const j = rng.int(0, i);
      [pairs[i], pairs[j]] = [pairs[j]!, pairs[i]!];
    }
    return `?${pairs.map(([k, v]) => (rng.chance(0.03) ? enc(k) : `${enc(k)}=${enc(v)}`)).join('&')}`;
  }

  // ---- headers and bodies ----

  function headers(write: boolean): Record<string, string> {
    const h: Record<string, string> = {};
    const r = rng.next();
    if (r < 0.85 || plausible) h.authorization = `Bearer ${rng.pick(catalog.goodTokens)}`;
    else if (r < 0.93) h.authorization = rng.chance(0.7) ? `Bearer ${rng.pick(catalog.badTokens)}` : latin1(rng.pick(['Basic YTpi', 'Bearer', 'Bearer ', 'bearer  x.y.z', 'Token abc', text()]));
    else {
      // No token: dev headers (dev mode is on, the test client is on loopback), often hostile.
      if (rng.chance(0.7)) h['x-tenant-id'] = latin1(rng.chance(0.5) ? '11111111-1111-4111-8111-111111111111' : text());
      if (rng.chance(0.5)) h['x-user-id'] = latin1(text());
      if (rng.chance(0.3)) h['x-user-role'] = latin1(text());
    }
    if (write || rng.chance(0.1)) {
      const ct = plausible ? 0 : rng.next();
      if (ct < 0.8) h['content-type'] = 'application/json';
      else if (ct < 0.95) h['content-type'] = rng.pick(['text/plain', 'application/json; charset=latin1', 'application/vnd.api+json', 'application/json;charset="UTF-8"', 'multipart/form-data', '', 'application/x-www-form-urlencoded']);
    }
    if (rng.chance(0.15)) h[rng.pick(writeHeaders)] = latin1(rng.chance(0.5) ? rng.pick(['true', 'false', 'binary', 'text', 'resolution=merge-duplicates', 'missing=default', 'return=representation']) : text());
    if (rng.chance(0.05)) h['x-request-id'] = latin1(text());
    if (rng.chance(0.03)) h.accept = latin1(text());
    return h;
  }

  /** Header values: no control characters (Node refuses them), Latin-1 only. */
  function latin1(s: string): string {
    return [...s].map((c) => (c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f || c.charCodeAt(0) > 0xff ? '?' : c)).join('').trim().slice(0, 4000);
  }

  function jsonValue(depth = 0): unknown {
    const r = rng.next();
    if (r < 0.2) return text();
    if (r < 0.35) return rng.pick([0, -0, 1, -1, 1.5, 1e308, -1e308, 5e-324, 2 ** 53 + 1, 2147483648, 123456789]);
    if (r < 0.42) return rng.pick([true, false, null]);
    if (r < 0.5) return rawNumber();
    if (r < 0.65 && depth < 8) return Array.from({ length: rng.int(0, 4) }, () => jsonValue(depth + 1));
    if (r < 0.75 && depth < 8) return Object.fromEntries(Array.from({ length: rng.int(0, 4) }, () => [text(), jsonValue(depth + 1)]));
    if (r < 0.85) return deep(rng.int(5, 9), rng.chance(0.5) ? 1 : 'x');
    return rng.pick(['', 'x', 'paid', '2024-01-01', '{1,2}', '11111111-1111-4111-8111-111111111111']);
  }

  /** A number as raw JSON text, beyond what a JS number holds. */
  function rawNumber(): RawJson {
    return new RawJson(rng.pick(['9223372036854775808', '-9223372036854775809', '123456789012345678901234567890.123456789', '1e400', '-1e-400', '0.00000000000000000000001', '18446744073709551616']));
  }

  function deep(levels: number, leaf: unknown, arraysOnly = false): unknown {
    let v = leaf;
    for (let i = 0; i < levels; i++) v = arraysOnly || rng.chance(0.8) ? [v] : { k: v };
    return v;
  }

  function row(t: FuzzTable): Record<string, unknown> {
    const o: Record<string, unknown> = {};
    const n = plausible ? rng.int(1, 3) : rng.count(3, 40);
    for (let i = 0; i < n; i++) o[(plausible || rng.chance(0.85)) && t.columns.length ? rng.pick(t.columns).name : columnName(t)] = jsonValue();
    if (huge) for (const c of t.columns) if (c.type.endsWith('[]')) o[c.name] = deep(rng.int(5, 9), 'x', true);
    return o;
  }

  function body(value: () => unknown): Buffer | undefined {
    const r = plausible && rng.chance(0.9) ? 0 : rng.next();
    if (r < 0.75) return Buffer.from(stringify(value()));
    if (r < 0.8) return undefined;
    if (r < 0.9) return Buffer.from(rng.pick(['', ' ', '{', '[', '{"a":}', '[1,]', "{'a':1}", 'NaN', '{"a":NaN}', '\ufeff{}', 'null', '[]', '{}', '"s"', '1', 'true', '{"a":1}{"b":2}', '{"__proto__":{"x":1}}', '{"a":1,"a":2}']));
    if (r < 0.93) return Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xc3, 0x28, 0xff, 0x22, 0x7d]); // invalid UTF-8 inside a string
    if (r < 0.97) return Buffer.from(stringify(deep(rng.int(30, 2000), 1)));
    if (r < 0.985) return Buffer.from(`{${Array.from({ length: 10001 }, (_, i) => `"k${i}":1`).join(',')}}`);
    return Buffer.alloc(1024 * 1024 + rng.int(1, 2048), 0x20); // over max_request_body_bytes
  }

  // ---- routes ----

  function list(): FuzzRequest {
    const t = table();
    return { route: 'list', method: rng.chance(0.9) ? 'GET' : 'HEAD', path: `/api/${tableName()}${readQuery(t)}`, headers: headers(false) };
  }

  function get(): FuzzRequest {
    const t = table();
    return { route: 'get', method: rng.chance(0.95) ? 'GET' : 'HEAD', path: `/api/${enc(t.name)}/${id(t)}${readQuery(t, ['select', 'expand', 'limit'], false)}`, headers: headers(false) };
  }

  function child(): FuzzRequest {
    const parents = catalog.tables.filter((t) => t.referencedBy.length > 0 && t.primaryKey.length > 0);
    const parent = plausible && parents.length ? rng.pick(parents) : table();
    const childTable = (plausible && catalog.tables.find((t) => t.name === rng.pick(parent.referencedBy))) || table();
    const childName = rng.chance(0.8) ? childTable.name : text();
    return { route: 'child', method: 'GET', path: `/api/${enc(parent.name)}/${id(parent)}/${enc(childName) || 'x'}${readQuery(childTable)}`, headers: headers(false) };
  }

  function aggregate(): FuzzRequest {
    const t = table();
    const pairs: [string, string][] = [];
    if (rng.chance(0.9)) pairs.push(['fn', rng.chance(0.8) ? rng.pick(['count', 'sum', 'avg', 'min', 'max']) : text()]);
    if (rng.chance(0.7)) pairs.push(['column', columnName(t)]);
    const rest = readQuery(t, plausible ? ['search'] : ['search', 'search_columns', 'limit']);
    const q = query(pairs);
    return { route: 'aggregate', method: 'GET', path: `/api/${enc(t.name)}/aggregate${q}${q && rest ? `&${rest.slice(1)}` : rest}`, headers: headers(false) };
  }

  function explain(): FuzzRequest {
    const t = table();
    return { route: 'explain', method: 'GET', path: `/api/${enc(t.name)}/_explain${readQuery(t)}`, headers: headers(false) };
  }

  function writeQuery(t: FuzzTable): string {
    const pairs: [string, string][] = [];
    if (rng.chance(0.4)) pairs.push(['returning', rng.chance(0.1) ? '*' : listOf(rng.count(4, 2000), () => columnName(t))]);
    if (rng.chance(0.05)) pairs.push(filter(t));
    if (rng.chance(0.05)) pairs.push(['returning', 'id']);
    return query(pairs);
  }

  function insert(): FuzzRequest {
    const t = table();
    return { route: 'insert', method: 'POST', path: `/api/${enc(t.name)}${writeQuery(t)}`, headers: headers(true), body: body(() => row(t)) };
  }

  function batch(): FuzzRequest {
    const t = table();
    const rows = (): unknown[] => Array.from({ length: rng.chance(0.05) ? 1001 : rng.count(3, 50) }, () => (rng.chance(0.9) ? row(t) : jsonValue()));
    return { route: 'batch', method: 'POST', path: `/api/${enc(t.name)}${writeQuery(t)}`, headers: headers(true), body: body(rows) };
  }

  function upsert(): FuzzRequest {
    const t = table();
    const h = headers(true);
    if (rng.chance(0.6)) h['x-upsert'] = rng.chance(0.9) ? 'true' : latin1(text());
    else h.prefer = rng.pick(['resolution=merge-duplicates', 'resolution=ignore-duplicates', 'resolution=x', 'missing=default', latin1(text())]);
    if (rng.chance(0.7)) h['x-on-conflict'] = latin1(listOf(rng.count(2, 2000), () => columnName(t)));
    return { route: 'upsert', method: 'POST', path: `/api/${enc(t.name)}${writeQuery(t)}`, headers: h, body: body(() => (rng.chance(0.7) ? row(t) : [row(t), row(t)])) };
  }

  function patch(): FuzzRequest {
    const t = table();
    return { route: 'patch', method: 'PATCH', path: `/api/${enc(t.name)}/${id(t)}${writeQuery(t)}`, headers: headers(true), body: body(() => (rng.chance(0.9) ? row(t) : jsonValue())) };
  }

  function del(): FuzzRequest {
    const t = table();
    return { route: 'delete', method: 'DELETE', path: `/api/${enc(t.name)}/${id(t)}${writeQuery(t)}`, headers: headers(false) };
  }

  function rpc(): FuzzRequest {
    const arrayTaking = catalog.functions.filter((f) => f.args.some((a) => a.type.endsWith('[]')));
    const fn = huge && arrayTaking.length ? rng.pick(arrayTaking) : rng.pick(catalog.functions);
    const r = plausible ? 0 : rng.next();
    const name = r < 0.75 ? enc(fn.name) : r < 0.85 ? `${enc(fn.schema)}.${enc(fn.name)}` : r < 0.9 ? rng.pick(['pg_catalog.pg_sleep', 'pg_sleep', 'rpc_private.secret', 'public.', '.x', 'a.b.c']) : enc(text()) || 'x';
    const args = (): unknown => {
      const k = rng.next();
      if (huge) return fn.args.map((a) => (a.type.endsWith('[]') ? deep(rng.int(4, 9), 1, true) : jsonValue()));
      if (k < 0.45) return Object.fromEntries(fn.args.filter(() => rng.chance(0.8)).map((a) => [a.name, a.type.endsWith('[]') && rng.chance(0.3) ? deep(rng.int(1, 9), 1) : jsonValue()]).concat(rng.chance(0.1) ? [[text(), 1]] : []));
      if (k < 0.75) return Array.from({ length: rng.chance(0.9) ? fn.args.length : rng.count(3, 150) }, () => jsonValue());
      return jsonValue();
    };
    const h = headers(true);
    if (rng.chance(0.2)) h['x-gw-result-format'] = rng.chance(0.7) ? 'binary' : latin1(text());
    return { route: 'rpc', method: rng.chance(0.93) ? 'POST' : rng.pick(['GET', 'PATCH', 'DELETE']), path: `/api/rpc/${name}${rng.chance(0.05) ? readQuery(table()) : ''}`, headers: h, body: body(args) };
  }

  function contracts(): FuzzRequest {
    return { route: 'contracts', method: rng.chance(0.8) ? 'GET' : rng.pick(['HEAD', 'POST', 'DELETE']), path: `/api/_rpc/contracts${rng.chance(0.3) ? readQuery(table()) : ''}`, headers: headers(false) };
  }

  function junk(): FuzzRequest {
    const segments = Array.from({ length: rng.int(0, 6) }, () => (rng.chance(0.5) ? tableName() : enc(text()) || 'x'));
    const method = rng.pick(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD', 'TRACE', 'PROPFIND']);
    const write = method === 'POST' || method === 'PATCH' || method === 'PUT';
    return { route: 'junk', method, path: `/api/${segments.join('/')}${readQuery(table())}`, headers: headers(write), ...(write ? { body: body(() => jsonValue()) } : {}) };
  }
}

/** A JSON number written as raw text (JSON.stringify has no way to write 9223372036854775808 exactly). */
class RawJson {
  constructor(readonly text: string) {}
}

function stringify(value: unknown): string {
  const marks: string[] = [];
  const json = JSON.stringify(value, (_key, v: unknown) => {
    if (v instanceof RawJson) {
      marks.push(v.text);
      return `\u0000raw${marks.length - 1}\u0000`;
    }
    return v;
  });
  return (json ?? 'null').replace(/"\\u0000raw(\d+)\\u0000"/g, (_m, i: string) => marks[Number(i)]!);
}
