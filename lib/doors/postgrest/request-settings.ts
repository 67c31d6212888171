/**
 * PostgREST's transaction-local `request.*` settings (docs/postgrest-dialect.md, "Settings"):
 * the token's claims as JSON, the method, the path below the mount point, and the request
 * headers as JSON without the credentials Authorization, Proxy-Authorization and Cookie (the
 * token's claims are in request.jwt.claims).
 * Given to execute as the door's hook (lib/pipeline/door.ts); read by functions and policies
 * written for PostgREST.
 */
import type { RequestSettings } from '../../pipeline/database';
import type { ExecuteContext } from '../../pipeline/stage-types';
import { preferredTimeZone } from './parse/postgrest-prefer';

export function requestSettings(ctx: ExecuteContext): RequestSettings {
  const { identity, request } = ctx;
  const claims: Record<string, unknown> = identity.source === 'jwt' ? { ...identity.claims } : {};
  if (identity.source !== 'anonymous') {
    if (identity.tenantId !== '') claims['tenant_id'] = identity.tenantId;
    if (identity.userId !== '') claims['user_id'] = identity.userId;
    if (identity.role !== '') claims['role'] = identity.role;
    if (identity.agentId !== '') claims['agent_id'] = identity.agentId;
    if (identity.scopes.length) claims['scope'] = identity.scopes.join(' ');
  }
  const headers = Object.fromEntries(Object.entries(request.headers).filter(([name, value]) => value !== undefined && !credentialHeaders.has(name)));
  // `Prefer: timezone=`: the transaction's TimeZone, in which timestamps are rendered (docs/postgrest-dialect.md, "Preferences").
  const timeZone = preferredTimeZone(request.headers['prefer']);
  return { claims: JSON.stringify(claims), method: request.method, path: `/${request.segments.join('/')}`, headers: JSON.stringify(headers), ...(timeZone ? { timeZone } : {}) };
}

/** Headers that carry credentials: never copied into `request.headers`. */
const credentialHeaders = new Set(['authorization', 'proxy-authorization', 'cookie']);
