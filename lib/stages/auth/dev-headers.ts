/**
 * Dev-mode header identity (docs/security.md, "Dev mode").
 *
 * In:  a request that carries no bearer token (the caller, `createAuthStage`, guarantees this).
 * Out: an Identity with source 'dev-headers', or undefined when dev headers do not apply.
 * Never: honour the headers outside dev mode or from a non-loopback peer (they are ignored
 * there, not an error: a proxy may well pass them through); be consulted when a token is present.
 *
 * A header that is absent or empty counts as not given; when none of the three is given the
 * request has no credentials.
 */
import type { ResolvedConfig } from '../../pipeline/resolved-config';
import { GatewayError } from '../../errors/gateway-error';
import type { GatewayRequest } from '../../pipeline/gateway-request';
import { identityTextProblem } from './claims-to-identity';
import type { Identity } from '../../pipeline/identity';

export const devHeaderNames = Object.freeze({ userId: 'x-user-id', role: 'x-user-role', tenantId: 'x-tenant-id' });

export function devHeadersIdentity(
  request: GatewayRequest,
  config: Pick<ResolvedConfig, 'devMode' | 'requireTenant'>,
): Identity | undefined {
  if (!config.devMode || !request.loopback) return undefined;
  const userId = headerText(request, devHeaderNames.userId);
  const role = headerText(request, devHeaderNames.role);
  const tenantId = headerText(request, devHeaderNames.tenantId);
  if (userId === '' && role === '' && tenantId === '') return undefined;
  if (config.requireTenant && tenantId === '') {
    throw new GatewayError('UNAUTHORIZED', `The request carries no ${devHeaderNames.tenantId} header.`, {
      headers: { 'WWW-Authenticate': 'Bearer' },
      reason: 'bad_dev_headers',
    });
  }
  return Object.freeze({
    tenantId,
    userId,
    role,
    agentId: '',
    scopes: Object.freeze([]) as readonly string[],
    claims: Object.freeze({}),
    source: 'dev-headers',
  });
}

function headerText(request: GatewayRequest, name: string): string {
  const text = request.headers[name] ?? '';
  const problem = identityTextProblem(text);
  if (problem !== undefined) {
    throw new GatewayError('UNAUTHORIZED', `The ${name} header ${problem}.`, { headers: { 'WWW-Authenticate': 'Bearer' }, reason: 'bad_dev_headers' });
  }
  return text;
}
