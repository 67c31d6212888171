/**
 * checkPolicyNames: every table and column the policy names must exist in the discovered schema.
 * Run at `ready` (and on reloadSchema): a misspelt table would fall back to "*" or the default
 * decision, and a misspelt column in an `except` list would leave the real column open, so a
 * name that matches nothing is a startup error, not a silent no-op. Columns of the "*" rule must
 * exist in some table.
 */
import { GatewayConfigError } from '../../errors/gateway-config-error';
import { nearestName } from '../../errors/nearest-name';
import type { SchemaCache } from '../../schema/schema-types';
import type { AccessPolicy, ColumnSet } from './access-policy';
import type { LegacyPolicy } from './legacy-policy';

export function checkPolicyNames(policy: AccessPolicy, schema: SchemaCache): void {
  const problems: string[] = [];
  const allColumns = new Set(schema.tables.flatMap((t) => t.columns.map((c) => c.name)));
  for (const [name, rule] of policy.rules) {
    const table = name === '*' ? undefined : schema.tablesByName.get(name);
    if (name !== '*' && table === undefined) {
      const near = nearestName(name, schema.tablesByName.keys());
      problems.push(`tables.${name}: no such table${near ? ` (did you mean ${near}?)` : ''}`);
      continue;
    }
    const known = table ? new Set([...table.columns.map((c) => c.name), ...(table.computedFields?.keys() ?? []), ...(table.computedRelations?.keys() ?? [])]) : allColumns;
    for (const [key, set] of [['read_columns', rule.read], ['write_columns', rule.write], ['returning_columns', rule.returning]] as const) {
      for (const column of namesOf(set)) {
        if (known.has(column)) continue;
        const near = nearestName(column, known);
        problems.push(`tables.${name}.${key}: no column ${column}${table ? ` in ${name}` : ' in any table'}${near ? ` (did you mean ${near}?)` : ''}`);
      }
    }
  }
  if (problems.length > 0) throw new GatewayConfigError(`access policy ${policy.source} names what the database does not have: ${problems.join('; ')}`, 'access');
}

/** The same for the legacy policy: tables, `allowed_columns` and the columns of `filter`. */
export function checkLegacyPolicyNames(policy: LegacyPolicy, schema: SchemaCache): void {
  const problems: string[] = [];
  const allColumns = new Set(schema.tables.flatMap((t) => t.columns.map((c) => c.name)));
  for (const entry of policy.entries) {
    const table = entry.table === '*' ? undefined : schema.tablesByName.get(entry.table);
    if (entry.table !== '*' && table === undefined) {
      const near = nearestName(entry.table, schema.tablesByName.keys());
      problems.push(`"${entry.name}": no table ${entry.table}${near ? ` (did you mean ${near}?)` : ''}`);
      continue;
    }
    const known = table ? new Set(table.columns.map((c) => c.name)) : allColumns;
    for (const column of [...(entry.allowedColumns ?? []), ...entry.filter.map((c) => c.column)]) {
      if (known.has(column)) continue;
      const near = nearestName(column, known);
      problems.push(`"${entry.name}": no column ${column}${table ? ` in ${entry.table}` : ' in any table'}${near ? ` (did you mean ${near}?)` : ''}`);
    }
  }
  if (problems.length > 0) throw new GatewayConfigError(`legacy policy ${policy.source} names what the database does not have: ${problems.join('; ')}`, 'policy');
}

function namesOf(set: ColumnSet): Iterable<string> {
  return set.kind === 'all' ? [] : set.names;
}
