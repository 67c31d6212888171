/**
 * The policy reads the write body from the command (parse's rows), never from the request and
 * never by parsing it again: the legacy `filter` check of inserted and updated rows.
 */
import type { ResolvedConfig } from '../../../lib/pipeline/resolved-config';
import { GatewayError } from '../../../lib/errors/gateway-error';
import type { GatewayRequest } from '../../../lib/pipeline/gateway-request';
import { anonymousIdentity } from '../../../lib/pipeline/identity';
import { enforcePolicy } from '../../../lib/stages/policy/enforce-policy';
import { legacyPermit } from '../../../lib/stages/policy/legacy-permit';
import { toLegacyPolicy } from '../../../lib/stages/policy/legacy-policy';
import { parseInsert } from '../../../lib/doors/rest/parse/parse-insert';
import { parseUpdate } from '../../../lib/doors/rest/parse/parse-update';
import { orders } from '../support/schema-fixture';
import { thrown } from '../support/thrown';

const config = { defaultLimit: 100, maxLimit: 1000, maxBatchSize: 1000 } as ResolvedConfig;
const request = (body: string, method = 'POST', segments: string[] = ['orders']): GatewayRequest => ({
  id: 'r', method, segments, rawSegments: segments, query: [], headers: { 'content-type': 'application/json' }, body, loopback: true,
});
const legacy = toLegacyPolicy({ policies: [{ name: 'own', table: 'orders', role: 'member', operations: ['read', 'create', 'update'], filter: 'status = $plan AND "limit" = $user_id' }] }, 'inline');
const permit = legacyPermit(legacy, { ...anonymousIdentity, tenantId: 't', role: 'member', userId: '7', claims: { plan: 'gold' } });
const insert = (body: string) => parseInsert(orders, request(body), config);
const refused = (fn: () => unknown): GatewayError => {
  const e = thrown(fn, GatewayError);
  expect(e.code).toBe('FORBIDDEN');
  return e;
};

describe('the legacy filter check of written rows reads command.rows', () => {
  it('lets rows that carry the condition values through, comparing numbers as before (7.0 is 7)', () => {
    expect(enforcePolicy(permit, insert('{"status":"gold","limit":7}'))).toMatchObject({ kind: 'insert' });
    expect(enforcePolicy(permit, insert('[{"status":"gold","limit":7.0},{"limit":"7","status":"gold"}]'))).toMatchObject({ kind: 'insert' });
  });

  it('refuses a row with another value, a missing column or a non-scalar, naming the batch row', () => {
    expect(refused(() => enforcePolicy(permit, insert('{"status":"silver","limit":7}'))).details).toEqual({ table: 'orders', column: 'status' });
    expect(refused(() => enforcePolicy(permit, insert('[{"status":"gold","limit":7},{"status":"gold"}]'))).details).toEqual({ table: 'orders', column: 'limit', row: 1 });
    expect(refused(() => enforcePolicy(permit, insert('{"status":["gold"],"limit":7}'))).details).toMatchObject({ column: 'status' });
  });

  it('never reads the body text again: the command alone decides', () => {
    const command = insert('{"status":"gold","limit":7}');
    // The text is what compile binds; the policy must not look at it (nor at any request).
    expect(enforcePolicy(permit, { ...command, body: 'not json' })).toMatchObject({ kind: 'insert' });
    expect(refused(() => enforcePolicy(permit, { ...command, rows: [{ status: '"silver"', limit: '7' }] })).details).toMatchObject({ column: 'status' });
  });

  it('update: checks only the conditions on the columns it changes, from command.row', () => {
    const update = parseUpdate(orders, request('{"status":"gold"}', 'PATCH', ['orders', '1']), config);
    expect(enforcePolicy(permit, update)).toMatchObject({ kind: 'update' });
    expect(refused(() => enforcePolicy(permit, { ...update, row: { status: '"tin"' } })).details).toEqual({ table: 'orders', column: 'status' });
  });
});
