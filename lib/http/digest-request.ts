/**
 * Express `req` -> GatewayRequest, once per request. The query string is read from the raw URL
 * (not Express's `req.query`, whose parser differs between Express 4 and 5 and turns
 * `a[b]=1` into objects), keeping order and repeated keys.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { GatewayError } from '../errors/gateway-error';
import type { GatewayRequest } from '../pipeline/gateway-request';
import { isLoopbackAddress } from './loopback';

/**
 * Most query parameters one request may carry, counted before they are decoded. No route needs
 * more than about 110 (100 filters plus the reserved names, docs/querying.md "Limits"); a URL of
 * 25,000 parameters is refused here instead of being split, decoded and parsed.
 */
export const MAX_QUERY_PARAMETERS = 1000;

export function digestRequest(req: IncomingMessage & { url?: string }, id: string, body?: string, bodyBytes?: Uint8Array): GatewayRequest {
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  const path = q === -1 ? url : url.slice(0, q);
  const rawSegments = path.split('/').filter((s) => s !== '');
  const segments: string[] = [];
  try {
    // A segment without '%' decodes to itself.
    for (const s of rawSegments) segments.push(s.includes('%') ? decodeURIComponent(s) : s);
  } catch {
    throw new GatewayError('PARSE_ERROR', 'The request path is not valid percent-encoding.');
  }
  let query: (readonly [string, string])[];
  try {
    // URLSearchParams decodes `+` as a space (the spec's `search` relies on it) and never throws,
    // so malformed escapes are checked separately.
    const raw = q === -1 ? '' : url.slice(q + 1);
    checkParameterCount(raw);
    if (/%(?![0-9a-fA-F]{2})/.test(raw)) throw new Error('bad escape');
    query = [];
    for (const [k, v] of new URLSearchParams(raw)) query.push(Object.freeze([k, v] as const));
  } catch (err) {
    if (err instanceof GatewayError) throw err;
    throw new GatewayError('PARSE_ERROR', 'The query string is not valid percent-encoding.');
  }
  const headers: Record<string, string | undefined> = {};
  const raw = req.headers;
  for (const name in raw) {
    const value = raw[name];
    headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return Object.freeze({
    id,
    method: (req.method ?? 'GET').toUpperCase(),
    segments: Object.freeze(segments),
    rawSegments: Object.freeze(rawSegments),
    query: Object.freeze(query),
    headers: Object.freeze(headers),
    body,
    ...(bodyBytes === undefined ? {} : { bodyBytes }),
    loopback: isLoopbackAddress(req.socket?.remoteAddress),
  });
}

/** Counts the non-empty `&`-separated parts, as URLSearchParams would make them, without making them. */
function checkParameterCount(raw: string): void {
  let count = 0;
  let start = 0;
  while (start <= raw.length) {
    const end = raw.indexOf('&', start);
    const stop = end === -1 ? raw.length : end;
    if (stop > start && ++count > MAX_QUERY_PARAMETERS) {
      throw new GatewayError('PARSE_ERROR', `The query string has more than ${MAX_QUERY_PARAMETERS} parameters.`, {
        details: { limit: 'query_parameters', max: MAX_QUERY_PARAMETERS },
        hint: 'See "Limits" in docs/querying.md.',
      });
    }
    if (end === -1) break;
    start = end + 1;
  }
}

/** A caller-supplied request id is reused only when it is short and plain, for log correlation. */
export function requestIdOf(req: IncomingMessage): string {
  const header = req.headers['x-request-id'];
  return typeof header === 'string' && /^[A-Za-z0-9._:-]{1,128}$/.test(header) ? header : randomUUID();
}
