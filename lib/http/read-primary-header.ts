/**
 * `x-gw-read-primary: true`: this request's reads go to the primary, not a read replica
 * (docs/scaling-out.md, "Read replicas"), e.g. right after a write made through another instance.
 * In: the request digest. Out: whether the caller asked for the primary. Never: accepts a value
 * other than `true` or `false` (a typo must not silently read a replica).
 */
import { GatewayError } from '../errors/gateway-error';
import type { GatewayRequest } from '../pipeline/gateway-request';

export const readPrimaryHeader = 'x-gw-read-primary';

export function readsFromPrimary(request: GatewayRequest): boolean {
  const raw = request.headers[readPrimaryHeader];
  if (raw === undefined) return false;
  const value = raw.trim().toLowerCase();
  if (value === 'true') return true;
  if (value === 'false') return false;
  throw new GatewayError('PARSE_ERROR', `The header ${readPrimaryHeader} must be \`true\` or \`false\`, not \`${raw.slice(0, 32)}\`.`, {
    details: { header: readPrimaryHeader },
  });
}
