/**
 * resolveBodyColumns: the row objects of a write body -> the columns they name, checked against
 * the schema cache before any SQL exists.
 * In: the table and the parsed rows (`row` index reported only for batches). Out: the union of
 * the keys as Column objects, in table order (the statement text then depends only on the set).
 * Never: lets an unknown key, a generated column or an identity ALWAYS column through (400, with
 * `details.row` = the zero-based index of the offending row in a batch).
 */
import { GatewayError } from '../../errors/gateway-error';
import { columnCandidates, suggestName } from '../../errors/name-hint';
import type { Column, Table } from '../../schema/schema-types';
import { clip } from './resolve-names';

export function resolveBodyColumns(table: Table, rows: readonly unknown[], batch: boolean): readonly Column[] {
  const used = new Set<Column>();
  rows.forEach((row, index) => {
    const where = batch ? { row: index } : {};
    if (typeof row !== 'object' || row === null || Array.isArray(row)) {
      throw new GatewayError('PARSE_ERROR', batch ? `Row ${index} of the batch is not a JSON object.` : 'The body must be a JSON object.', { details: where });
    }
    for (const key of Object.keys(row)) {
      const column = table.columnsByName.get(key);
      if (!column) {
        throw new GatewayError('UNKNOWN_COLUMN', `Table \`${table.name}\` has no column \`${clip(key)}\` (in the body${batch ? `, row ${index}` : ''}).`, {
          details: { table: table.name, column: clip(key), in: 'body', ...where },
          ...suggestName(key, columnCandidates(table), (near) => `Did you mean \`${near}\`?`),
        });
      }
      if (column.generated || column.identity === 'a') {
        const what = column.generated ? 'a generated column' : 'an identity column (GENERATED ALWAYS)';
        throw new GatewayError('VALIDATION_ERROR', `Column \`${column.name}\` is ${what}; PostgreSQL computes its value, so it cannot be written.`, {
          details: { table: table.name, column: column.name, ...where },
          hint: `Leave \`${column.name}\` out of the body.`,
        });
      }
      used.add(column);
    }
  });
  return Object.freeze(table.columns.filter((c) => used.has(c)));
}
