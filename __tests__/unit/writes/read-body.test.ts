/**
 * readBody: bounded reading of a write body. A declared Content-Length over the limit is refused
 * before any byte is read; a streamed body stops being stored at the first chunk past the limit.
 */
import { PassThrough } from 'node:stream';
import type { IncomingMessage } from 'node:http';
import { readBody } from '../../../lib/http/read-body';

function fakeRequest(headers: Record<string, string> = {}): PassThrough & { headers: Record<string, string> } {
  return Object.assign(new PassThrough(), { headers });
}
const asReq = (r: unknown) => r as IncomingMessage;

describe('readBody', () => {
  it('returns the exact text, multi-byte characters split across chunks included', async () => {
    const req = fakeRequest();
    const promise = readBody(asReq(req), 100);
    const bytes = Buffer.from('{"n":9223372036854775807,"s":"é€"}');
    req.write(bytes.subarray(0, 30));
    req.end(bytes.subarray(30));
    await expect(promise).resolves.toBe('{"n":9223372036854775807,"s":"é€"}');
  });

  it('returns undefined for an empty body', async () => {
    const req = fakeRequest();
    const promise = readBody(asReq(req), 100);
    req.end();
    await expect(promise).resolves.toBeUndefined();
  });

  it('refuses a Content-Length over the limit before storing anything, and drains the rest into nothing', async () => {
    const req = fakeRequest({ 'content-length': '101' });
    await expect(readBody(asReq(req), 100)).rejects.toMatchObject({ code: 'PAYLOAD_TOO_LARGE', status: 413 });
    // The stream is flowing with no data listener: what the client still sends is dropped.
    expect(req.readableFlowing).toBe(true);
    expect(req.listenerCount('data')).toBe(0);
  });

  it('stops storing a streamed body at the first chunk past the limit, before the stream ends', async () => {
    const req = fakeRequest();
    const promise = readBody(asReq(req), 100);
    req.write(Buffer.alloc(60, 0x20));
    req.write(Buffer.alloc(60, 0x20));
    // Never ended: the refusal must not wait for the rest.
    await expect(promise).rejects.toMatchObject({ code: 'PAYLOAD_TOO_LARGE' });
  });

  it('refuses invalid UTF-8 with 400', async () => {
    const req = fakeRequest();
    const promise = readBody(asReq(req), 100);
    req.end(Buffer.from([0x7b, 0xff, 0x7d]));
    await expect(promise).rejects.toMatchObject({ code: 'PARSE_ERROR' });
  });

  it('uses a body a host parser already read: text as is, objects re-serialised', async () => {
    await expect(readBody(asReq({ headers: {}, _body: true, body: { a: 1 } }), 100)).resolves.toBe('{"a":1}');
    await expect(readBody(asReq({ headers: {}, _body: true, body: '{"a":2}' }), 100)).resolves.toBe('{"a":2}');
    await expect(readBody(asReq({ headers: {}, _body: true, body: { a: 'x'.repeat(200) } }), 100)).rejects.toMatchObject({ code: 'PAYLOAD_TOO_LARGE' });
  });
});
