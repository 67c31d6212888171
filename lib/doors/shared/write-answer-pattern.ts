/**
 * writeAnswerPattern: a write with answer options (read back) -> its query pattern (docs/allow-list.md;
 * docs/postgrest-dialect.md, "Allow-list patterns"), e.g.
 *   PATCH pgrst.books body=pages,title genre=eq id=in return=representation select=id,title
 *   POST pgrst.books body=id,title batch on_conflict=id resolution=merge missing=default
 * The method, the schema-qualified table, then in one canonical order: the written columns
 * (sorted), batch, the upsert, the filters of PATCH / DELETE (as a read writes them, sorted),
 * `return=` when not minimal, `select=` and the representation's embedded levels, max-affected.
 * Values never appear. In: the command only. Never: reads the request.
 */
import type { DeleteCommand, InsertCommand, WriteAnswer, UpdateCommand } from '../../command/command';
import { levelParts, selectOf } from './read-pattern';

export function writeAnswerPattern(command: InsertCommand | UpdateCommand | DeleteCommand, answer: WriteAnswer): string {
  const parts: string[] = [];
  if (command.kind !== 'delete') parts.push(`body=${command.columns.map((c) => c.name).sort().join(',')}`);
  if (command.kind === 'insert') {
    if (command.batch) parts.push('batch');
    if (command.onConflict && answer.method !== 'PUT') parts.push(`on_conflict=${command.onConflict.columns.map((c) => c.name).join(',')}`, `resolution=${command.onConflict.action === 'update' ? 'merge' : 'ignore'}`);
    if (command.missingDefault) parts.push('missing=default');
  }
  if (command.kind !== 'insert') parts.push(...levelParts({ ...answer.node, items: [], order: [], where: command.where ?? [] }, ''));
  if (answer.returnMode !== 'minimal') parts.push(`return=${answer.returnMode}`);
  if (answer.returnMode === 'representation') {
    if (answer.explicitSelect) parts.push(`select=${selectOf(answer.node)}`);
    parts.push(...levelParts(answer.node, ''));
  }
  if (answer.maxAffected !== null) parts.push('max-affected');
  return [answer.method, `${answer.schema}.${command.table.name}`, ...parts].join(' ');
}
