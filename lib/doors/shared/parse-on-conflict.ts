/**
 * parseOnConflict: the upsert headers of a POST -> OnConflict, or null for a plain insert.
 * In: `X-Upsert: true` + optional `X-On-Conflict: col[,col]` (docs/writing.md, "Upsert"), or PostgREST's
 * `Prefer: resolution=merge-duplicates | ignore-duplicates`. Out: the conflict columns (default:
 * the primary key) and the action. Never: lets a conflict target through that is not exactly the
 * column set of a primary key or unique constraint (PostgreSQL would answer 42P10 at run time;
 * here it is a 400 naming the constraints that exist).
 */
import type { OnConflict } from '../../command/command';
import { GatewayError } from '../../errors/gateway-error';
import type { Column, Table } from '../../schema/schema-types';
import { checkLimit } from './request-limits';
import { clip, resolveColumn } from './resolve-names';
import { splitList } from './split-list';

export function parseOnConflict(table: Table, headers: Readonly<Record<string, string | undefined>>, preferences: ReadonlyMap<string, string>): OnConflict | null {
  const upsertHeader = headers['x-upsert']?.trim().toLowerCase();
  if (upsertHeader !== undefined && upsertHeader !== 'true' && upsertHeader !== 'false') {
    throw new GatewayError('PARSE_ERROR', `The X-Upsert header takes \`true\` or \`false\`, not \`${clip(upsertHeader)}\`.`);
  }
  const resolution = preferences.get('resolution');
  if (resolution !== undefined && resolution !== 'merge-duplicates' && resolution !== 'ignore-duplicates') {
    throw new GatewayError('PARSE_ERROR', `Prefer: resolution takes \`merge-duplicates\` or \`ignore-duplicates\`, not \`${clip(resolution)}\`.`);
  }
  const conflictHeader = headers['x-on-conflict'];
  if (upsertHeader !== 'true' && resolution === undefined) {
    if (conflictHeader !== undefined) {
      throw new GatewayError('PARSE_ERROR', 'X-On-Conflict only applies to an upsert.', { hint: 'Add the header X-Upsert: true (or Prefer: resolution=merge-duplicates).' });
    }
    return null;
  }
  const columns = conflictHeader === undefined ? table.primaryKey : conflictColumns(table, conflictHeader);
  const matches = columns.length > 0 && table.uniqueKeys.some((k) => k.columns.length === columns.length && k.columns.every((c) => columns.includes(c)));
  if (!matches) {
    const constraints = table.uniqueKeys.map((k) => ({ name: k.name, columns: k.columns.map((c) => c.name), primary: k.primary }));
    const named = constraints.map((k) => `${k.name} (${k.columns.join(', ')})`).join('; ');
    const message =
      conflictHeader === undefined
        ? `Table \`${table.name}\` has no primary key, so an upsert needs X-On-Conflict naming the columns of a unique constraint.`
        : `X-On-Conflict (${columns.map((c) => c.name).join(', ')}) is not the column set of a primary key or unique constraint of \`${table.name}\`.`;
    throw new GatewayError('PARSE_ERROR', message, {
      details: { table: table.name, constraints },
      hint: constraints.length ? `Use the columns of one of: ${named}.` : `\`${table.name}\` has no primary key or unique constraint, so it cannot be upserted.`,
    });
  }
  return Object.freeze({ columns, action: resolution === 'ignore-duplicates' ? 'ignore' : 'update' });
}

function conflictColumns(table: Table, header: string): readonly Column[] {
  const columns: Column[] = [];
  const names = splitList(header, 'X-On-Conflict');
  checkLimit('columnNames', names.length, 'names in X-On-Conflict');
  for (const raw of names) {
    const name = raw.trim();
    if (name === '') throw new GatewayError('PARSE_ERROR', 'The X-On-Conflict header has an empty column name.', { hint: 'Write X-On-Conflict: col1,col2.' });
    const column = resolveColumn(table, name, 'X-On-Conflict');
    if (!columns.includes(column)) columns.push(column);
  }
  return Object.freeze(columns);
}
