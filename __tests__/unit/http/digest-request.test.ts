import type { IncomingMessage } from 'node:http';
import { digestRequest, requestIdOf } from '../../../lib/http/digest-request';
import { isLoopbackAddress as isLoopback, isLoopbackHost, parseBind } from '../../../lib/http/loopback';
import { GatewayError } from '../../../lib/errors/gateway-error';

function req(url: string, headers: Record<string, string> = {}, remoteAddress = '127.0.0.1'): IncomingMessage {
  return { url, method: 'get', headers, socket: { remoteAddress } } as unknown as IncomingMessage;
}

describe('digestRequest', () => {
  it('splits the path, keeps raw segments, and keeps query order and repeated keys', () => {
    const r = digestRequest(req('/we%22ird%20table/1%2C2,3?total.gte=1&total=lte.5&search=a+b'), 'id-1');
    expect(r.segments).toEqual(['we"ird table', '1,2,3']);
    expect(r.rawSegments).toEqual(['we%22ird%20table', '1%2C2,3']);
    expect(r.query).toEqual([
      ['total.gte', '1'],
      ['total', 'lte.5'],
      ['search', 'a b'],
    ]);
    expect(r.method).toBe('GET');
    expect(Object.isFrozen(r)).toBe(true);
  });

  it('rejects malformed percent-encoding in the path and the query', () => {
    expect(() => digestRequest(req('/orders%E0%A4'), 'id')).toThrow(GatewayError);
    expect(() => digestRequest(req('/orders?x=%zz'), 'id')).toThrow(GatewayError);
  });

  it('reuses a plain x-request-id and replaces a hostile one', () => {
    expect(requestIdOf(req('/', { 'x-request-id': 'abc-123' }))).toBe('abc-123');
    expect(requestIdOf(req('/', { 'x-request-id': 'a b\n<script>' }))).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('recognises loopback peers only', () => {
    expect(isLoopback('127.0.0.1')).toBe(true);
    expect(isLoopback('127.10.0.5')).toBe(true);
    expect(isLoopback('::1')).toBe(true);
    expect(isLoopback('::ffff:127.0.0.1')).toBe(true);
    expect(isLoopback('10.0.0.1')).toBe(false);
    expect(isLoopback('::ffff:10.0.0.1')).toBe(false);
    expect(isLoopback('1127.0.0.1')).toBe(false);
    expect(isLoopback(undefined)).toBe(false);
    expect(isLoopback('[::1]')).toBe(true);
  });

  it('treats localhost and loopback addresses as loopback bind hosts', () => {
    expect(isLoopbackHost('localhost')).toBe(true);
    expect(isLoopbackHost('127.0.0.1')).toBe(true);
    expect(isLoopbackHost('0.0.0.0')).toBe(false);
    expect(isLoopbackHost('example.com')).toBe(false);
  });

  it('parses bind addresses, IPv6 bracketed', () => {
    expect(parseBind('127.0.0.1:3000')).toEqual({ host: '127.0.0.1', port: 3000 });
    expect(parseBind('[::1]:8080')).toEqual({ host: '::1', port: 8080 });
    expect(parseBind('localhost:99999')).toBeUndefined();
    expect(parseBind('no-port')).toBeUndefined();
  });
});
