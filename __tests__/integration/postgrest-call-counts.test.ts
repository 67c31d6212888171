/**
 * `Prefer: count=...` on a function call that answers one value (a scalar, one row, void): PostgREST
 * sends `Content-Range: 0-0/1` with a count and `0-0/*` without, on POST, GET and HEAD, and
 * postgrest-js reads `count` from it (docs/postgrest-dialect.md, "Functions").
 */
import type { PostgrestApp } from '../support/postgrest-app';
import { pgrstTokenA, pgrstTokenB, usePostgrestApp } from '../support/postgrest-app';

let app: PostgrestApp;
usePostgrestApp({}, (a) => (app = a));

const call = (method: string, path: string, token: string, prefer: string, body?: string): Promise<Response> =>
  fetch(`${app.url}${path}`, { method, headers: { Authorization: `Bearer ${token}`, Prefer: prefer, 'Content-Type': 'application/json' }, ...(body === undefined ? {} : { body }) });

it.each([pgrstTokenA, pgrstTokenB])('postgrest-js rpc with count=exact on a scalar function: count 1, for each tenant', async (token) => {
  const { data, count, status, error } = await app.client(token).rpc('add', { a: 2, b: 3 }, { count: 'exact' });
  expect(error).toBeNull();
  expect(status).toBe(200);
  expect(data).toBe(5);
  expect(count).toBe(1);
  const got = await app.client(token).rpc('add', { a: 2, b: 3 }, { get: true, count: 'exact' });
  expect(got.count).toBe(1);
  expect(got.data).toBe(5);
});

it.each([
  ['POST', '/rpc/add', '{"a":1,"b":2}'],
  ['GET', '/rpc/add?a=1&b=2', undefined],
  ['HEAD', '/rpc/add?a=1&b=2', undefined],
])('%s %s: Content-Range 0-0/1 with count=exact, 0-0/* without', async (method, path, body) => {
  for (const mode of ['exact', 'planned', 'estimated']) {
    const res = await call(method, path, pgrstTokenA, `count=${mode}`, body);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-range')).toBe('0-0/1');
    const text = await res.text();
    expect(text).toBe(method === 'HEAD' ? '' : '3');
  }
  const plain = await call(method, path, pgrstTokenA, '', body);
  expect(plain.headers.get('content-range')).toBe('0-0/*');
});

it('a void function answers 204 with the Content-Range of its one value', async () => {
  const res = await call('POST', '/rpc/touch', pgrstTokenB, 'count=exact', '{}');
  expect(res.status).toBe(204);
  expect(res.headers.get('content-range')).toBe('0-0/1');
});
