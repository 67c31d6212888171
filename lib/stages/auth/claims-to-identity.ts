/**
 * A verified JWT payload -> Identity (docs/security.md, "JWT verification").
 *
 * In:  the payload `jwt.verify` returned (signature, algorithm, exp/nbf, aud/iss already checked).
 * Out: a deep-frozen Identity with source 'jwt'.
 * Never: make a tenant out of anything but `tenant_id` (`operator_id` in particular stays an
 * extra claim); coerce an object or boolean into an id; let an id that PostgreSQL would reject
 * (NUL) or an absurdly long one reach `set_config`.
 *
 * Decisions:
 * - `tenant_id`, `user_id`, `role`, `agent_id`: strings are kept; integers become decimal text.
 *   Any other type, including `null`, a fraction or an integer beyond 2^53 (JSON parsing has
 *   already rounded it, so it could name somebody else's tenant), is a 401.
 * - `user_id` falls back to `sub` when absent or empty.
 * - Scopes: `scope`, `scopes` and `permissions` each accept a space- or comma-separated string
 *   or an array of strings; the union is kept in first-seen order, without duplicates.
 * - `claims` holds every claim except the seven above; registered claims (`exp`, `iat`, `nbf`,
 *   `aud`, `iss`, `sub`, `jti`) are kept there, so a policy or host middleware can read them.
 */
import type { ResolvedConfig } from '../../pipeline/resolved-config';
import { GatewayError } from '../../errors/gateway-error';
import type { AuthFailureReason } from '../../pipeline/auth-failure-reasons';
import type { Identity } from '../../pipeline/identity';

/** Longest tenant / user / role / agent id accepted, in UTF-16 code units. */
export const maxIdentityTextLength = 256;

/** Claims that become Identity fields and therefore do not repeat in `claims`. */
const identityClaimNames = new Set(['tenant_id', 'user_id', 'role', 'agent_id', 'scope', 'scopes', 'permissions']);
const scopeClaimNames = ['scope', 'scopes', 'permissions'] as const;

/** RFC 6750 §3.1: `invalid_token` for a token that is malformed, expired or otherwise unusable. */
export const invalidTokenHeaders = Object.freeze({ 'WWW-Authenticate': 'Bearer error="invalid_token"' });

/**
 * The one message for every failed verification: it never says which check failed (only
 * `reason`, for the operator's metrics, does).
 */
export function invalidTokenError(reason: AuthFailureReason, cause?: unknown): GatewayError {
  return new GatewayError('UNAUTHORIZED', 'The bearer token is invalid or expired.', {
    headers: invalidTokenHeaders,
    cause,
    reason,
  });
}

/** Why `text` cannot be an identity value, or undefined when it can. */
export function identityTextProblem(text: string): string | undefined {
  if (text.length > maxIdentityTextLength) return `is longer than ${maxIdentityTextLength} characters`;
  if (text.includes('\u0000')) return 'contains a NUL character';
  return undefined;
}

export function claimsToIdentity(payload: unknown, config: Pick<ResolvedConfig, 'requireTenant'>): Identity {
  if (!isPlainObject(payload)) throw invalidTokenError('malformed_token');
  const tenantId = claimText(payload, 'tenant_id');
  if (config.requireTenant && tenantId === '') {
    throw new GatewayError('UNAUTHORIZED', 'The token carries no tenant_id claim.', { headers: invalidTokenHeaders, reason: 'bad_claim' });
  }
  const userId = claimText(payload, 'user_id') || claimText(payload, 'sub');
  const claims = Object.fromEntries(Object.entries(payload).filter(([name]) => !identityClaimNames.has(name)));
  return Object.freeze({
    tenantId,
    userId,
    role: claimText(payload, 'role'),
    agentId: claimText(payload, 'agent_id'),
    scopes: scopesOf(payload),
    claims: deepFreeze(claims),
    source: 'jwt',
  });
}

/** The claim as text; '' when absent. Throws for any other type or unusable text. */
function claimText(payload: Record<string, unknown>, name: string): string {
  const value = payload[name];
  if (value === undefined) return '';
  let text: string;
  if (typeof value === 'string') text = value;
  else if (typeof value === 'number' && Number.isSafeInteger(value)) text = String(value);
  else throw badClaim(name, 'must be a string or an integer');
  const problem = identityTextProblem(text);
  if (problem !== undefined) throw badClaim(name, problem);
  return text;
}

function scopesOf(payload: Record<string, unknown>): readonly string[] {
  const scopes = new Set<string>();
  for (const name of scopeClaimNames) {
    const value = payload[name];
    if (value === undefined) continue;
    if (typeof value === 'string') {
      for (const scope of value.split(/[\s,]+/)) if (scope !== '') scopes.add(scope);
    } else if (Array.isArray(value) && value.every((scope): scope is string => typeof scope === 'string')) {
      for (const scope of value) if (scope !== '') scopes.add(scope);
    } else {
      throw badClaim(name, 'must be a string or an array of strings');
    }
  }
  return Object.freeze([...scopes]);
}

/**
 * The token is authentic here (its signature checked out), so naming the faulty claim tells
 * its holder nothing they could not read from the token itself.
 */
function badClaim(name: string, problem: string): GatewayError {
  return new GatewayError('UNAUTHORIZED', `The token claim \`${name}\` ${problem}.`, { headers: invalidTokenHeaders, reason: 'bad_claim' });
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}
