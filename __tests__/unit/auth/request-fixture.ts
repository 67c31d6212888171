/**
 * Hand-made GatewayRequest / BaseContext values for stage unit tests (no HTTP, no database).
 */
import type { ResolvedConfig } from '../../../lib/pipeline/resolved-config';
import type { GatewayRequest } from '../../../lib/pipeline/gateway-request';
import type { BaseContext } from '../../../lib/pipeline/stage-types';

export function testRequest(headers: Record<string, string | undefined> = {}, loopback = true): GatewayRequest {
  return Object.freeze({
    id: 'test-request',
    method: 'GET',
    segments: ['items'],
    rawSegments: ['items'],
    query: [],
    headers: Object.freeze({ ...headers }),
    body: undefined,
    loopback,
  });
}

/** `schema` and `db` are never touched by `auth`; reaching them fails the test loudly. */
export function testContext(request: GatewayRequest, config: ResolvedConfig): BaseContext {
  const untouchable = new Proxy({}, { get: () => { throw new Error('auth must not touch schema or db'); } });
  return { request, config, schema: untouchable as BaseContext['schema'], db: untouchable as BaseContext['db'] };
}
