/**
 * Write bodies at the HTTP edge: media type (415), size (413 from Content-Length and while
 * streaming a chunked body), malformed and hostile JSON (400, never 500), hostile identifiers,
 * and a host app that already mounted express.json(). Every refused write is checked to have
 * written nothing.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import request from 'supertest';
import { createGateway, type Gateway } from '../../lib';
import { createTestDatabase, TEST_JWT_SECRET } from '../support/test-database';
import { tokenA, useGatewayApp } from '../support/gateway-app';

type TestDb = Awaited<ReturnType<typeof createTestDatabase>>;
let db: TestDb;
let gateway: Gateway;
let app: express.Express;
const MAX_BYTES = 4096;

useGatewayApp({ maxRequestBodyBytes: MAX_BYTES }, (started) => ({ db, gateway, app } = started));

const post = (path: string, body: string | Buffer, type = 'application/json') =>
  request(app).post(path).set('Authorization', `Bearer ${tokenA}`).set('Content-Type', type).send(body);
const itemCount = async () => Number((await db.admin.query('SELECT count(*) AS n FROM write_items')).rows[0].n);

describe('write bodies: media type', () => {
  it.each([['text/plain'], ['application/x-www-form-urlencoded'], ['application/json; charset=latin1']])('refuses %s with 415', async (type) => {
    const res = await post('/api/write_items', '{"sku":"mt","name":"x"}', type);
    expect(res.status).toBe(415);
    expect(res.body.code).toBe('UNSUPPORTED_MEDIA_TYPE');
  });

  it('refuses a body without Content-Type with 415', async () => {
    const res = await request(app).patch('/api/write_items/1').set('Authorization', `Bearer ${tokenA}`).unset('Content-Type').send(Buffer.from('{"name":"x"}'));
    expect(res.status).toBe(415);
  });

  it('accepts application/json with charset=utf-8 and +json types', async () => {
    expect((await post('/api/write_items?returning=sku', '{"sku":"mt-ok-1","name":"x"}', 'application/json; charset=UTF-8')).status).toBe(201);
    expect((await post('/api/write_items?returning=sku', '{"sku":"mt-ok-2","name":"x"}', 'application/vnd.api+json')).status).toBe(201);
  });
});

describe('write bodies: size', () => {
  it('refuses a declared Content-Length over max_request_body_bytes with 413', async () => {
    const before = await itemCount();
    const body = JSON.stringify({ sku: 'big', name: 'x'.repeat(MAX_BYTES) });
    const res = await post('/api/write_items', body);
    expect(res.status).toBe(413);
    expect(res.body).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', details: { max_request_body_bytes: MAX_BYTES } });
    expect(await itemCount()).toBe(before);
  });

  it('refuses a chunked body (no Content-Length) once it passes the limit, without waiting for the rest', async () => {
    const server = http.createServer(app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const result = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = http.request({ port, host: '127.0.0.1', method: 'POST', path: '/api/write_items', headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${tokenA}`, 'Transfer-Encoding': 'chunked' } }, (res) => {
          let body = '';
          res.on('data', (c: Buffer) => (body += c.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        });
        req.on('error', reject);
        // Two chunks over the limit, and the request is never ended: the answer must still come.
        req.write(`{"sku":"chunked","name":"${'y'.repeat(MAX_BYTES)}`);
        req.write('y'.repeat(MAX_BYTES));
      });
      expect(result.status).toBe(413);
      expect(JSON.parse(result.body).code).toBe('PAYLOAD_TOO_LARGE');
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
    expect((await db.admin.query("SELECT 1 FROM write_items WHERE sku = 'chunked'")).rows).toEqual([]);
  });
});

describe('write bodies: malformed and hostile JSON never cause a 500', () => {
  const deep = `{"sku":"deep","name":"x","note":${'['.repeat(100)}${']'.repeat(100)}}`;
  const manyKeys = `{"sku":"keys","name":"x","note":{${Array.from({ length: 10001 }, (_, i) => `"${i.toString(36)}":0`).join(',')}}}`;
  const cases: [string, string | Buffer, string][] = [
    ['empty', '', 'PARSE_ERROR'],
    ['whitespace', '   ', 'PARSE_ERROR'],
    ['not JSON', '{sku: 1}', 'PARSE_ERROR'],
    ['truncated', '{"sku":"t"', 'PARSE_ERROR'],
    ['null', 'null', 'PARSE_ERROR'],
    ['a number', '42', 'PARSE_ERROR'],
    ['a string', '"row"', 'PARSE_ERROR'],
    ['an array of scalars', '[1,2]', 'PARSE_ERROR'],
    ['nested arrays', '[[{"sku":"n"}]]', 'PARSE_ERROR'],
    ['nesting deeper than 64', deep, 'PARSE_ERROR'],
    ['a NUL escape in text', '{"sku":"nul","name":"a\\u0000b"}', 'VALIDATION_ERROR'],
    ['a proto key', '{"__proto__":{"x":1},"sku":"p","name":"x"}', 'UNKNOWN_COLUMN'],
    ['a text for an array column', '{"sku":"arr","name":"x","big":[1,2]}', 'VALIDATION_ERROR'],
  ];
  it.each(cases)('%s -> 400', async (_name, body, code) => {
    const before = await itemCount();
    const res = await post('/api/write_items', body);
    expect([res.status, res.body.code]).toEqual([400, code]);
    expect(await itemCount()).toBe(before);
  });

  it('refuses a body that is not valid UTF-8 with 400', async () => {
    const server = http.createServer(app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const body = Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d]); // {"\xff\xfe":1}
      const result = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = http.request({ port, host: '127.0.0.1', method: 'POST', path: '/api/write_items', headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${tokenA}`, 'Content-Length': body.length } }, (res) => {
          let text = '';
          res.on('data', (c: Buffer) => (text += c.toString()));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
        });
        req.on('error', reject);
        req.end(body);
      });
      expect(result.status).toBe(400);
      expect(JSON.parse(result.body)).toMatchObject({ code: 'PARSE_ERROR', message: 'The request body is not valid UTF-8.' });
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('refuses an object with more than 10,000 keys (under a larger body limit)', async () => {
    const roomy = createGateway({ databaseUrl: db.appUrl, jwtSecret: TEST_JWT_SECRET });
    try {
      await roomy.ready;
      const roomyApp = express().use('/api', roomy);
      const res = await request(roomyApp).post('/api/write_items').set('Authorization', `Bearer ${tokenA}`).set('Content-Type', 'application/json').send(manyKeys);
      expect([res.status, res.body.code]).toEqual([400, 'PARSE_ERROR']);
      expect(res.body.details).toEqual({ max_keys: 10000 });
    } finally {
      await roomy.close();
    }
  });
});

describe('write bodies: identifiers and host body parsers', () => {
  it('writes columns whose names need quoting', async () => {
    const row = { select: 's', from: 7, 'col with space': 'c', 'a"b': 'q', 'naïve_ünïcode': 'u', 'semi;colon': ';' };
    const res = await post(`/api/${encodeURIComponent('we"ird table')}`, JSON.stringify(row));
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject(row);
    const { rows } = await db.admin.query('SELECT "select", "a""b" FROM "we""ird table" WHERE id = $1', [res.body.data.id]);
    expect(rows).toEqual([{ select: 's', 'a"b': 'q' }]);
  });

  it('works behind a host express.json() (req.body already parsed)', async () => {
    const host = express();
    host.use(express.json());
    host.use('/api', gateway);
    const res = await request(host).post('/api/write_items?returning=sku,qty').set('Authorization', `Bearer ${tokenA}`).send({ sku: 'host-json', name: 'x', qty: 2 });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ data: { sku: 'host-json', qty: 2 } });
    const patched = await request(host).patch(`/api/write_items/${(await db.admin.query("SELECT id FROM write_items WHERE sku = 'host-json'")).rows[0].id}?returning=qty`).set('Authorization', `Bearer ${tokenA}`).send({ qty: 3 });
    expect(patched.body).toEqual({ data: { qty: 3 } });
  });
});
