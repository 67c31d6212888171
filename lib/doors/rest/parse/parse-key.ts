import type { GetCommand } from '../../../command/command';
import { GatewayError } from '../../../errors/gateway-error';
import type { Table } from '../../../schema/schema-types';

/**
 * `:id` -> primary-key values. A composite key is its values in key order separated by commas
 * (docs/querying.md, "One row"); a comma inside a value is written `%2C`, so the split is on the raw segment.
 * With `tenant_column` set (docs/citus.md), a key that includes that column may be given without
 * it: the key is then the other columns, and the policy stage adds `tenant_column = <the caller's
 * tenant>` to the statement (scope-to-tenant.ts), which addresses the same one row.
 */
export function parseKey(table: Table, rawSegment: string, tenantColumn?: string): GetCommand['key'] {
  if (table.primaryKey.length === 0) {
    throw new GatewayError('NOT_FOUND', `Table \`${table.name}\` has no primary key, so it has no /:id routes.`);
  }
  const parts = rawSegment.split(',');
  const withoutTenant = tenantColumn === undefined ? undefined : table.primaryKey.filter((c) => c.name !== tenantColumn);
  if (withoutTenant && withoutTenant.length === table.primaryKey.length - 1 && withoutTenant.length > 0 && parts.length === withoutTenant.length) {
    return decodeKey(withoutTenant, parts);
  }
  if (parts.length !== table.primaryKey.length) {
    throw new GatewayError('PARSE_ERROR', `The key of \`${table.name}\` has ${table.primaryKey.length} column(s) (${table.primaryKey.map((c) => c.name).join(', ')}), so :id needs ${table.primaryKey.length} comma-separated value(s).`);
  }
  return decodeKey(table.primaryKey, parts);
}

function decodeKey(columns: Table['primaryKey'], parts: readonly string[]): GetCommand['key'] {
  return Object.freeze(
    columns.map((column, i) => {
      let value: string;
      try {
        value = decodeURIComponent(parts[i]!);
      } catch {
        throw new GatewayError('PARSE_ERROR', 'The :id path segment is not valid percent-encoding.');
      }
      return Object.freeze({ column, value });
    }),
  );
}
