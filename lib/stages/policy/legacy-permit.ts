/**
 * The legacy YAML policy as a Permit. The first entry (in file order) whose table (or "*"), role
 * (or any) and operations match the request grants it; none is a 403. `allowed_columns` limits
 * the columns read, written and returned; `filter` becomes row conditions whose values come from
 * the caller's identity and are bound as parameters. A variable the caller does not have (no
 * tenant, a missing claim) is a 403, never an empty value compared with the column.
 */
import type { Identity } from '../../pipeline/identity';
import { ALL_COLUMNS, type ColumnSet } from './access-policy';
import { forbidden, type Permit, type RowCondition } from './enforce-policy';
import type { LegacyPolicy } from './legacy-policy';

export function legacyPermit(policy: LegacyPolicy, identity: Identity): Permit {
  return (table, operation) => {
    const entry = policy.entries.find((e) => (e.table === table.name || e.table === '*') && (e.role === '*' || e.role === identity.role) && e.operations.has(operation));
    if (entry === undefined) {
      throw forbidden(`No entry of the policy lets the role \`${identity.role || '(none)'}\` ${operation} \`${table.name}\`.`, { table: table.name, operation });
    }
    const columns: ColumnSet = entry.allowedColumns === undefined ? ALL_COLUMNS : { kind: 'only', names: entry.allowedColumns };
    const rows = entry.filter.map((condition): RowCondition => {
      const column = table.columnsByName.get(condition.column);
      if (column === undefined) throw forbidden(`The policy entry "${entry.name}" filters on \`${condition.column}\`, which \`${table.name}\` does not have.`, { table: table.name, operation });
      const value = variable(identity, condition.variable);
      if (value === undefined) throw forbidden(`The policy entry "${entry.name}" needs $${condition.variable}, which the caller's token does not carry.`, { table: table.name, operation });
      return { kind: 'compare', field: { column, path: [] }, op: 'eq', value, negate: false };
    });
    return { read: columns, write: columns, returning: ALL_COLUMNS, rows };
  };
}

function variable(identity: Identity, name: string): string | undefined {
  const value: unknown =
    name === 'tenant_id' ? identity.tenantId : name === 'user_id' ? identity.userId : name === 'role' ? identity.role : name === 'agent_id' ? identity.agentId : identity.claims[name];
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return typeof value === 'string' && value !== '' ? value : undefined;
}
