/**
 * Where a request's JWT comes from: the `Authorization: Bearer` header (RFC 6750 §2.1, scheme
 * case-insensitive), else, when `jwt_cookie` is set, that cookie. The header wins when both are
 * present.
 */
import { GatewayError } from '../../errors/gateway-error';
import type { GatewayRequest } from '../../pipeline/gateway-request';

/**
 * The token of the request, or undefined when it carries none. An Authorization header that is
 * present but not a usable Bearer credential is a 401, never "no credentials". An empty token
 * cookie counts as absent (that is how browsers are told to forget a cookie).
 */
export function readToken(request: GatewayRequest, cookieName: string | undefined): string | undefined {
  const header = request.headers['authorization'];
  if (header === undefined) {
    if (cookieName === undefined) return undefined;
    const token = readCookie(request.headers['cookie'], cookieName);
    return token === '' ? undefined : token;
  }
  const trimmed = header.trim();
  const space = trimmed.search(/\s/);
  const scheme = space === -1 ? trimmed : trimmed.slice(0, space);
  if (scheme.toLowerCase() !== 'bearer') {
    throw new GatewayError('UNAUTHORIZED', 'The Authorization header must use the Bearer scheme.', {
      headers: { 'WWW-Authenticate': 'Bearer' },
      reason: 'malformed_header',
    });
  }
  const token = space === -1 ? '' : trimmed.slice(space).trim();
  if (token === '') {
    throw new GatewayError('UNAUTHORIZED', 'The Authorization header carries no bearer token.', {
      headers: { 'WWW-Authenticate': 'Bearer error="invalid_request"' },
      reason: 'malformed_header',
    });
  }
  return token;
}

/** The first cookie called `name` in a `Cookie` header (RFC 6265 §5.4), quotes and %-escapes removed. */
function readCookie(header: string | undefined, name: string): string | undefined {
  if (header === undefined) return undefined;
  for (const pair of header.split(';')) {
    const eq = pair.indexOf('=');
    if (eq === -1 || pair.slice(0, eq).trim() !== name) continue;
    let value = pair.slice(eq + 1).trim();
    if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1);
    try {
      return decodeURIComponent(value);
    } catch {
      return value; // not %-encoded after all; verification decides
    }
  }
  return undefined;
}
