import type { GetCommand } from '../../../command/command';
import { GatewayError } from '../../../errors/gateway-error';
import type { Table } from '../../../schema/schema-types';

/**
 * `:id` -> primary-key values. A composite key is its values in key order separated by commas
 * (docs/querying.md, "One row"); a comma inside a value is written `%2C`, so the split is on the raw segment.
 */
export function parseKey(table: Table, rawSegment: string): GetCommand['key'] {
  if (table.primaryKey.length === 0) {
    throw new GatewayError('NOT_FOUND', `Table \`${table.name}\` has no primary key, so it has no /:id routes.`);
  }
  const parts = rawSegment.split(',');
  if (parts.length !== table.primaryKey.length) {
    throw new GatewayError('PARSE_ERROR', `The key of \`${table.name}\` has ${table.primaryKey.length} column(s) (${table.primaryKey.map((c) => c.name).join(', ')}), so :id needs ${table.primaryKey.length} comma-separated value(s).`);
  }
  return Object.freeze(
    table.primaryKey.map((column, i) => {
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
