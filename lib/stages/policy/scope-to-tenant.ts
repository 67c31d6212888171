/**
 * `tenant_column` (docs/citus.md, "tenant_column"): Command -> the same command, narrowed to the
 * caller's tenant on every table level that has that column: the table read or written, the
 * parent of a child route, every level and junction of a read's tree (a page's embeds too), and the
 * representation a write or a call is read back through. Each becomes a row filter
 * `<tenant_column> = <the caller's tenant>`, which compile binds as a parameter like any other.
 * RLS stays the enforcer; this gives the planner the tenant predicate, so that Citus routes the
 * statement to one shard (a router query) and a single PostgreSQL can use a tenant index.
 * Never: widens a command, or runs when `tenant_column` is unset (the policy stage then never
 * calls it). A caller without a tenant gets a filter on '' too, which matches no valid row.
 * Inserts are not filtered: a row's tenant is its own value or the column default, which the
 * database's WITH CHECK policy judges.
 */
import type { Command, Condition, Embed, ReadCommand, ReadNode, WriteAnswer } from '../../command/command';
import { assertNever } from '../../command/command';
import { GatewayError } from '../../errors/gateway-error';
import type { Table } from '../../schema/schema-types';

export function scopeToTenant(command: Command, column: string, tenantId: string): Command {
  const filtered = <T extends { readonly rowFilters?: readonly Condition[] }>(table: Table, scoped: T): T => {
    const col = table.columnsByName.get(column);
    if (!col) return scoped;
    const own: Condition = Object.freeze({ kind: 'compare', field: Object.freeze({ column: col, path: Object.freeze([]) }), op: 'eq', value: tenantId, negate: false });
    return Object.freeze({ ...scoped, rowFilters: Object.freeze([...(scoped.rowFilters ?? []), own]) });
  };
  const node = (n: ReadNode): ReadNode =>
    filtered(n.table, {
      ...n,
      items: Object.freeze(n.items.map((item) => (item.kind === 'embed' ? Object.freeze({ ...item, embed: embed(item.embed) }) : item))),
    });
  const embed = (e: Embed): Embed => {
    const link = e.link.kind === 'junction' ? Object.freeze({ kind: 'junction' as const, junction: filtered(e.link.junction.table, e.link.junction) }) : e.link;
    return Object.freeze({ ...e, link, node: node(e.node) });
  };
  const answer = (a: WriteAnswer | undefined): { answer?: WriteAnswer } => (a ? { answer: Object.freeze({ ...a, node: node(a.node) }) } : {});
  const read = (r: ReadCommand): ReadCommand => Object.freeze({ ...r, root: node(r.root) });

  // A key that names another tenant addresses no row the statement could touch: 404 before SQL,
  // as the statement would answer (Citus fails such an UPDATE internally instead: docs/citus.md).
  const ownKey = (table: Table, key: readonly { readonly column: { readonly name: string }; readonly value: string }[]): void => {
    const given = key.find((k) => k.column.name === column);
    if (given && given.value.toLowerCase() !== tenantId.toLowerCase()) throw new GatewayError('NOT_FOUND', `No visible row of \`${table.name}\` has that key.`);
  };
  switch (command.kind) {
    case 'insert':
      return Object.freeze({ ...command, ...answer(command.answer) });
    case 'update':
    case 'delete':
      ownKey(command.table, command.key);
      return filtered(command.table, { ...command, ...answer(command.answer) });
    case 'rpc':
      return command.answer?.read ? Object.freeze({ ...command, answer: Object.freeze({ ...command.answer, read: read(command.answer.read) }) }) : command;
    case 'read':
      if (command.key) ownKey(command.table, command.key);
      if (!command.parent) return read(command);
      ownKey(command.parent.table, command.parent.key);
      return Object.freeze({ ...read(command), parent: filtered(command.parent.table, command.parent) });
    case 'contracts':
      return command;
    default:
      return assertNever(command, 'command');
  }
}
