/**
 * What the client sends and how it reads answers, with a recording `fetch` (no gateway): the URL
 * grammar of docs/querying.md and docs/writing.md (key-style filters, quoted names, `in` lists,
 * composite keys, `nested:`), headers, and the error object for each kind of failure. The same
 * calls against a real gateway are in __tests__/integration/client.test.ts.
 */
import { createClient, TablegateClientError, type FetchLike } from '../../../lib/client';

interface Sent {
  url: string;
  method: string;
  headers: Record<string, string>;
  body?: string;
}

function recorder(answer: { status: number; body?: string; headers?: Record<string, string> } = { status: 200, body: '{"data":[],"count":0,"limit":100,"offset":0}' }) {
  const sent: Sent[] = [];
  const fetch: FetchLike = async (url, init) => {
    sent.push({ url, ...init });
    return { status: answer.status, headers: { get: (n: string) => answer.headers?.[n.toLowerCase()] ?? null }, text: async () => answer.body ?? '' };
  };
  return { sent, fetch };
}

const base = 'http://gw.test/api';

describe('list requests', () => {
  it('writes select, expand, sort, paging and key-style filters, percent-encoded', async () => {
    const { sent, fetch } = recorder();
    const client = createClient(base, { fetch, token: 't0k' });
    await client
      .from('orders')
      .select(['id', 'a,b', 'say "x"'])
      .expand(['user', 'nested:order_items', 'orders!user'])
      .eq('status', 'paid')
      .ne('limit', 5)
      .in('note', ['a,b', 'say "hi"', ''])
      .like('note', '*50%_off*')
      .isNull('note', false)
      .contains('tags', 'vip')
      .gte('placed_at', new Date('2024-05-01T10:00:00Z'))
      .eq('moods', ['ok', 'so, so', 'a"b\\c'])
      .sort('total', 'desc')
      .sort('-odd')
      .limit(10)
      .offset(20)
      .count('exact');
    expect(sent).toHaveLength(1);
    const url = new URL(sent[0]!.url);
    expect(url.origin + url.pathname).toBe('http://gw.test/api/orders');
    expect([...url.searchParams]).toEqual([
      ['select', 'id,"a,b","say ""x"""'],
      ['expand', 'user,nested:order_items,"orders!user"'],
      ['sort', '-total,"-odd"'],
      ['limit', '10'],
      ['offset', '20'],
      ['count', 'exact'],
      ['status.eq', 'paid'],
      ['limit.ne', '5'],
      ['note.in', '("a,b","say ""hi""","")'],
      ['note.like', '*50%_off*'],
      ['note.is_null', 'false'],
      ['tags.contains', 'vip'],
      ['placed_at.gte', '2024-05-01T10:00:00.000Z'],
      ['moods.eq', '{"ok","so, so","a\\"b\\\\c"}'],
    ]);
    // Spaces and plus signs are percent-encoded, never `+` (which the gateway reads as a space).
    expect(sent[0]!.url).not.toContain('+');
    expect(sent[0]!).toMatchObject({ method: 'GET', headers: { accept: 'application/json', authorization: 'Bearer t0k' } });
    expect(sent[0]!.body).toBeUndefined();
  });

  it('is immutable: a derived query does not change the one it came from', () => {
    const client = createClient(base, { fetch: recorder().fetch });
    const paid = client.from('orders').eq('status', 'paid');
    paid.limit(5).sort('id');
    expect(paid.toPath()).toBe('/orders?status.eq=paid');
  });

  it('refuses a negative or fractional limit before sending', () => {
    const q = createClient(base, { fetch: recorder().fetch }).from('orders');
    expect(() => q.limit(-1)).toThrow(RangeError);
    expect(() => q.offset(1.5)).toThrow(RangeError);
  });
});

describe('row and write requests', () => {
  it('get, update and delete address the row by key; composite keys and commas inside a value', async () => {
    const { sent, fetch } = recorder({ status: 200, body: '{"data":{}}' });
    const t = createClient(base, { fetch }).from('we"ird table');
    await t.get(['hall,north', '2024-05-01T10:00:00+02:00'], { select: ['id'], expand: ['nested:x'] });
    await t.update(7, { a: 1 }, { returning: ['id', 'a b'] });
    await t.delete(7n);
    expect(sent.map((s) => `${s.method} ${s.url.slice(base.length)}`)).toEqual([
      'GET /we%22ird%20table/hall%2Cnorth,2024-05-01T10%3A00%3A00%2B02%3A00?select=id&expand=nested%3Ax',
      'PATCH /we%22ird%20table/7?returning=id%2C%22a%20b%22',
      'DELETE /we%22ird%20table/7',
    ]);
    expect(sent[1]).toMatchObject({ body: '{"a":1}', headers: { 'content-type': 'application/json' } });
  });

  it('insert sends the rows as JSON; upsert adds X-Upsert and X-On-Conflict', async () => {
    const { sent, fetch } = recorder({ status: 201, body: '{"data":[],"count":0}' });
    const t = createClient(base, { fetch }).from('orders');
    await t.insert([{ a: 1 }, { a: 2 }], { returning: ['a'] });
    await t.upsert({ id: 1, a: 3 }, { onConflict: ['id', 'other col'] });
    expect(sent[0]).toMatchObject({ method: 'POST', url: `${base}/orders?returning=a`, body: '[{"a":1},{"a":2}]' });
    expect(sent[1]).toMatchObject({ method: 'POST', url: `${base}/orders`, body: '{"id":1,"a":3}', headers: { 'x-upsert': 'true', 'x-on-conflict': 'id,"other col"' } });
  });

  it('rpc posts named arguments, and no body without arguments', async () => {
    const { sent, fetch } = recorder({ status: 200, body: '{"data":3}' });
    const client = createClient(base, { fetch });
    expect(await client.rpc('public.order_total', { p_order_id: 42 })).toEqual({ data: 3, error: null, status: 200 });
    await client.rpc('open_count');
    expect(sent[0]).toMatchObject({ method: 'POST', url: `${base}/rpc/public.order_total`, body: '{"p_order_id":42}' });
    expect(sent[1]!.body).toBeUndefined();
    expect(sent[1]!.headers['content-type']).toBeUndefined();
  });
});

describe('options', () => {
  it('calls the token function before each request; user headers are sent, lower-cased, but cannot replace the client own', async () => {
    const { sent, fetch } = recorder();
    let n = 0;
    const client = createClient(`${base}///`, { fetch, token: async () => `tok${++n}`, headers: { 'X-Request-Id': 'req-1', Accept: 'text/html' } });
    await client.from('t');
    await client.from('t');
    expect(sent.map((s) => s.headers)).toEqual([
      { 'x-request-id': 'req-1', accept: 'application/json', authorization: 'Bearer tok1' },
      { 'x-request-id': 'req-1', accept: 'application/json', authorization: 'Bearer tok2' },
    ]);
    expect(sent[0]!.url).toBe(`${base}/t`);
  });

  it('refuses a base URL that is not absolute http(s)', () => {
    expect(() => createClient('/api')).toThrow(/absolute http\(s\) URL/);
  });
});

describe('answers', () => {
  it("a gateway error body becomes a TablegateClientError with code, message, details, hint, status and request id", async () => {
    const body = '{"code":"UNKNOWN_COLUMN","message":"Table `orders` has no column `x`.","details":{"column":"x"},"hint":"Did you mean `id`?"}';
    const { fetch } = recorder({ status: 400, body, headers: { 'x-request-id': 'r-9' } });
    const res = await createClient(base, { fetch }).from('orders');
    expect(res.data).toBeNull();
    expect(res.status).toBe(400);
    expect(res.error).toBeInstanceOf(TablegateClientError);
    expect(res.error).toMatchObject({ code: 'UNKNOWN_COLUMN', message: 'Table `orders` has no column `x`.', details: { column: 'x' }, hint: 'Did you mean `id`?', status: 400, requestId: 'r-9' });
    expect(res.error!.toJSON()).toEqual(JSON.parse(body));
  });

  it('an error answer that is not the gateway body is UNEXPECTED_RESPONSE with the start of the text', async () => {
    const { fetch } = recorder({ status: 502, body: '<html>Bad Gateway</html>' });
    const res = await createClient(base, { fetch }).from('orders');
    expect(res.error).toMatchObject({ code: 'UNEXPECTED_RESPONSE', status: 502, details: { body: '<html>Bad Gateway</html>' } });
  });

  it('a 2xx answer without a JSON envelope is UNEXPECTED_RESPONSE; a 204 is data null', async () => {
    expect((await createClient(base, { fetch: recorder({ status: 200, body: 'ok' }).fetch }).from('t')).error?.code).toBe('UNEXPECTED_RESPONSE');
    expect(await createClient(base, { fetch: recorder({ status: 204 }).fetch }).from('t').delete(1)).toEqual({ data: null, error: null, status: 204 });
  });

  it('a fetch that rejects is NETWORK_ERROR with status 0 and the cause; the call still resolves', async () => {
    const cause = new TypeError('fetch failed');
    const res = await createClient(base, { fetch: async () => Promise.reject(cause) }).from('orders');
    expect(res.error).toMatchObject({ code: 'NETWORK_ERROR', status: 0, cause });
    expect(res.error!.message).toBe('GET /orders: no answer from the gateway (fetch failed).');
  });
});
