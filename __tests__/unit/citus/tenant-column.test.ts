/**
 * tenant_column and the Citus context without a database (docs/citus.md): the key without the
 * tenant column, the tenant filter added to every level, and the SET LOCAL values quoted so that
 * PostgreSQL reads them back unchanged.
 */
import type { Command, GetCommand, ReadCommand } from '../../../lib/command/command';
import { columnItems } from '../../../lib/command/read-items';
import { distributedContextStatements, quoteLiteral } from '../../../lib/db/distributed-context';
import { parseKey } from '../../../lib/doors/rest/parse/parse-key';
import { scopeToTenant } from '../../../lib/stages/policy/scope-to-tenant';
import { makeTable } from '../support/schema-fixture';

const T = '11111111-1111-4111-8111-111111111111';
const orders = makeTable('orders', [['tenant_id', 'uuid'], ['id', 'bigint'], ['status', 'text']], ['tenant_id', 'id']);
const plain = makeTable('notes', [['id', 'bigint']], ['id']);

describe('parseKey with tenant_column', () => {
  it('takes the key without the tenant column, or the whole key', () => {
    expect(parseKey(orders, '42', 'tenant_id').map((k) => [k.column.name, k.value])).toEqual([['id', '42']]);
    expect(parseKey(orders, `${T},42`, 'tenant_id').map((k) => [k.column.name, k.value])).toEqual([['tenant_id', T], ['id', '42']]);
  });
  it('without tenant_column a short key is still refused', () => {
    expect(() => parseKey(orders, '42')).toThrow(/2 comma-separated/);
  });
});

describe('scopeToTenant', () => {
  const get: GetCommand = { kind: 'read', table: orders, root: { table: orders, items: columnItems(orders.columns, false, []), explicitSelect: false, where: [], order: [], limit: 1, offset: 0 }, schema: 'public', count: null, media: 'page', plan: null, explicitLimit: false, explicitOffset: false, head: false, key: parseKey(orders, '42', 'tenant_id') };
  it('adds tenant_column = the tenant to a table that has the column', () => {
    const scoped = scopeToTenant(get, 'tenant_id', T) as GetCommand;
    expect(scoped.root.rowFilters).toEqual([{ kind: 'compare', field: { column: orders.columnsByName.get('tenant_id'), path: [] }, op: 'eq', value: T, negate: false }]);
  });
  it('leaves a table without the column alone', () => {
    const list: ReadCommand = { kind: 'read', table: plain, root: { table: plain, items: columnItems(plain.columns, false, []), explicitSelect: false, where: [], order: [], limit: 10, offset: 0 }, schema: 'public', count: null, media: 'page', plan: null, explicitLimit: false, explicitOffset: false, head: false };
    expect((scopeToTenant(list, 'tenant_id', T) as ReadCommand).root.rowFilters).toBeUndefined();
  });
  it("refuses another tenant's composite key before SQL (404)", () => {
    const other: Command = { ...get, key: parseKey(orders, `22222222-2222-4222-8222-222222222222,42`, 'tenant_id') };
    expect(() => scopeToTenant(other, 'tenant_id', T)).toThrow(expect.objectContaining({ code: 'NOT_FOUND' }));
  });
});

describe('the SET LOCAL context on Citus', () => {
  it('quotes values so that they read back unchanged, whatever standard_conforming_strings is', () => {
    expect(quoteLiteral("o'brien")).toBe("'o''brien'");
    expect(quoteLiteral('a\\b')).toBe("E'a\\\\b'");
    expect(() => quoteLiteral('a\0b')).toThrow(/NUL/);
  });
  it('turns propagation on first, then sets every app.* setting (and request.* when given)', () => {
    const statements = distributedContextStatements({ tenantId: T, userId: "x'; DROP TABLE orders; --", agentId: '' });
    expect(statements).toEqual([
      "SET LOCAL citus.propagate_set_commands = 'local'",
      `SET LOCAL app.current_tenant_id = '${T}'`,
      "SET LOCAL app.current_user_id = 'x''; DROP TABLE orders; --'",
      "SET LOCAL app.current_agent_id = ''",
      "SET LOCAL app.is_super_admin = 'false'",
    ]);
    expect(distributedContextStatements({ tenantId: T, userId: 'u', agentId: '', request: { claims: '{}', method: 'GET', path: '/x', headers: '{}' } })).toHaveLength(9);
  });
});
