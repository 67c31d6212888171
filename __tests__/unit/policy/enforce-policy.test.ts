/** The policy stage without a database: validation, rule lookup, checks and narrowing of commands. */
import { callerOrder, embedsOf, selectedColumns } from '../../../lib/command/read-items';
import { randomBytes } from 'node:crypto';
import type { ResolvedConfig } from '../../../lib/pipeline/resolved-config';
import { GatewayConfigError } from '../../../lib/errors/gateway-config-error';
import { GatewayError } from '../../../lib/errors/gateway-error';
import type { GatewayRequest } from '../../../lib/pipeline/gateway-request';
import { anonymousIdentity, type Identity } from '../../../lib/pipeline/identity';
import { type AccessPolicy, ruleFor, toAccessPolicy } from '../../../lib/stages/policy/access-policy';
import { accessPermit } from '../../../lib/stages/policy/access-permit';
import { legacyPermit } from '../../../lib/stages/policy/legacy-permit';
import { toLegacyPolicy } from '../../../lib/stages/policy/legacy-policy';
import { checkPolicyNames } from '../../../lib/stages/policy/check-policy-names';
import { enforcePolicy } from '../../../lib/stages/policy/enforce-policy';
import { createCursorCodec } from '../../../lib/pipeline/cursor-codec';
import { parseDelete } from '../../../lib/doors/rest/parse/parse-delete';
import { parseInsert } from '../../../lib/doors/rest/parse/parse-insert';
import { parseList } from '../../../lib/doors/rest/parse/parse-list';
import { orders, orderTags, schema } from '../support/schema-fixture';
import { thrown } from '../support/thrown';

const config = { defaultLimit: 100, maxLimit: 1000, maxBatchSize: 1000 } as ResolvedConfig;
const cursors = createCursorCodec(randomBytes(32));
const list = (query: string) => parseList(orders, [...new URLSearchParams(query)], config, cursors);
const request = (query: string, body?: string): GatewayRequest => ({
  id: 'r', method: 'POST', segments: [], rawSegments: [], query: [...new URLSearchParams(query)], headers: { 'content-type': 'application/json' }, body, loopback: true,
});
const who = (role: string, scopes: string[] = []): Identity => ({ ...anonymousIdentity, tenantId: 't', role, scopes });

const policy = toAccessPolicy(
  {
    default_decision: 'deny',
    tables: {
      orders: { operations: ['read', 'create'], read_columns: { except: ['notes', 'payload'] }, write_columns: { only: ['status'] }, returning_columns: { only: ['id', 'status', 'notes'] }, require_any_role: ['member'] },
      '*': { operations: ['read'], require_scopes: ['all:read'] },
    },
  },
  'test',
);
const enforce = (p: AccessPolicy, identity: Identity, command: Parameters<typeof enforcePolicy>[1]) => enforcePolicy(accessPermit(p, identity), command);
const forbidden = (fn: () => unknown): GatewayError => {
  const error = thrown(fn, GatewayError);
  expect(error.code).toBe('FORBIDDEN');
  return error;
};

describe('toAccessPolicy', () => {
  it('defaults to deny, falls back to "*", and requires operations in every rule', () => {
    expect(toAccessPolicy({}, 'x').defaultDecision).toBe('deny');
    expect(ruleFor(policy, 'orders')?.table).toBe('orders');
    expect(ruleFor(policy, 'order_tags')?.table).toBe('*');
    expect(ruleFor(toAccessPolicy({ tables: { orders: { operations: [] } } }, 'x'), 'order_tags')).toBeUndefined();
    expect(thrown(() => toAccessPolicy({ tables: { orders: {} } }, 'p.toml'), GatewayConfigError).message).toMatch(/^access policy p\.toml is invalid: tables\.orders: must have required property 'operations'/);
    expect(() => toAccessPolicy({ tables: { orders: { operations: ['read'], write_columns: { only: [] , except: [] } } } }, 'x')).toThrow(GatewayConfigError);
    expect(() => toAccessPolicy({ rules: {} }, 'x')).toThrow(/rules/);
  });
});

describe('enforcePolicy', () => {
  it('narrows a default projection and search to readable columns, keeping named readable ones', () => {
    const narrowed = enforce(policy, who('member'), list('search=x')) as ReturnType<typeof list>;
    expect(selectedColumns(narrowed.root).map((c) => c.name)).toEqual(['id', 'tenant_id', 'status', 'total', 'placed_at', 'tags', 'limit']);
    expect(narrowed.search?.columns.map((c) => c.name)).toEqual(['status']);
    const named = list('select=id,status&sort=-total');
    expect(enforce(policy, who('member'), named)).toEqual(named);
  });

  it('refuses denied columns wherever the caller names them, the role, and tables the policy denies', () => {
    for (const query of ['select=notes', 'notes=x', 'sort=notes', 'distinct=notes', 'search=x&search_columns=notes']) {
      expect(forbidden(() => enforce(policy, who('member'), list(query))).details).toMatchObject({ table: 'orders', column: 'notes' });
    }
    expect(forbidden(() => enforce(policy, who('guest'), list(''))).message).toMatch(/needs one of the roles member/);
    const tags = parseList(orderTags, [], config, cursors);
    expect(forbidden(() => enforce(policy, who('member'), tags)).details).toMatchObject({ table: 'order_tags', missing_scopes: ['all:read'] });
    expect(enforce(policy, who('member', ['all:read']), tags)).toEqual(tags);
  });

  it('checks written columns, operations and returning; narrows the default returning', () => {
    const insert = parseInsert(orders, request('', '{"status": "paid"}'), config);
    const narrowed = enforce(policy, who('member'), insert) as typeof insert;
    expect(narrowed.returning.map((c) => c.name)).toEqual(['id', 'status']);
    expect(forbidden(() => enforce(policy, who('member'), parseInsert(orders, request('', '{"status": "paid", "total": 1}'), config))).details).toMatchObject({ column: 'total', in: 'the body' });
    expect(forbidden(() => enforce(policy, who('member'), parseInsert(orders, request('returning=notes', '{"status": "paid"}'), config))).details).toMatchObject({ column: 'notes', in: 'returning' });
    expect(forbidden(() => enforce(policy, who('member'), parseInsert(orders, request('returning=total', '{"status": "paid"}'), config))).details).toMatchObject({ column: 'total', in: 'returning' });
    const del = parseDelete(orders, { ...request(''), method: 'DELETE', segments: ['orders', '1'], rawSegments: ['orders', '1'] });
    expect(forbidden(() => enforce(policy, who('member'), del)).details).toMatchObject({ operation: 'delete' });
  });

  it('passes everything through under default_decision = allow without rules', () => {
    const open = toAccessPolicy({ default_decision: 'allow' }, 'x');
    const command = list('select=notes');
    expect(enforce(open, anonymousIdentity, command)).toEqual(command);
  });
});

describe('checkPolicyNames', () => {
  it('names unknown tables and columns, with the nearest name', () => {
    const bad = toAccessPolicy({ tables: { ordrs: { operations: ['read'] }, orders: { operations: ['read'], read_columns: { except: ['note'] } }, '*': { operations: ['read'], write_columns: { except: ['ssn'] } } } }, 'p.toml');
    const message = thrown(() => checkPolicyNames(bad, schema), GatewayConfigError).message;
    expect(message).toContain('tables.ordrs: no such table (did you mean orders?)');
    expect(message).toContain('tables.orders.read_columns: no column note in orders (did you mean notes?)');
    expect(message).toContain('tables.*.write_columns: no column ssn in any table');
    expect(() => checkPolicyNames(policy, schema)).not.toThrow();
  });
});

describe('legacy policy', () => {
  const legacy = toLegacyPolicy(
    { policies: [{ name: 'own', table: 'orders', role: 'member', operations: ['read'], filter: 'status = $plan AND "limit" = $user_id', allowed_columns: ['id', 'status', 'limit'] }] },
    'inline',
  );

  it('parses filters into bound conditions and refuses anything else', () => {
    expect(legacy.entries[0]?.filter).toEqual([{ column: 'status', variable: 'plan' }, { column: 'limit', variable: 'user_id' }]);
    expect(() => toLegacyPolicy({ policies: [{ table: 'orders', operations: ['read'], filter: "status = 'x'" }] }, 'p')).toThrow(GatewayConfigError);
    expect(() => toLegacyPolicy({ policies: [{ table: 'orders', operations: ['read'], filter: 'status = $a or id = $b' }] }, 'p')).toThrow(GatewayConfigError);
  });

  it('turns the first matching entry into row filters from the identity and claims, and narrows columns', () => {
    const caller = { ...who('member'), userId: '7', claims: { plan: 'gold' } };
    const narrowed = enforcePolicy(legacyPermit(legacy, caller), list('')) as ReturnType<typeof list>;
    expect(narrowed.root.rowFilters?.map((f) => (f.kind === 'compare' ? [f.field.column.name, f.op, f.value] : f.kind))).toEqual([['status', 'eq', 'gold'], ['limit', 'eq', '7']]);
    expect(selectedColumns(narrowed.root).map((c) => c.name)).toEqual(['id', 'status', 'limit']);
    expect(forbidden(() => enforcePolicy(legacyPermit(legacy, { ...caller, claims: {} }), list(''))).message).toContain('$plan');
    expect(forbidden(() => enforcePolicy(legacyPermit(legacy, { ...caller, role: 'guest' }), list(''))).details).toMatchObject({ table: 'orders', operation: 'read' });
  });
});
