/**
 * One `sort` entry's name -> the column it orders by and, for `rel.col` / `rel.rel2.col`, the to-one
 * relations that lead to it (docs/querying.md, "Sort by a related column"). A column of the table
 * whose name is the whole text wins, so `a.b` is a related column only when the table has no
 * column `a.b`; a first segment that names no relation is an unknown column, as before.
 */
import type { RelatedStep } from '../../../command/command';
import { GatewayError } from '../../../errors/gateway-error';
import { relationsNamed } from '../../../schema/relations';
import type { Column, Relation, Table } from '../../../schema/schema-types';
import { clip, resolveColumn } from '../../shared/resolve-names';

/** Relations one sort entry may follow: deep enough for `item.order.user.name`, bounded for the statement's size. */
export const MAX_SORT_RELATIONS = 4;

export function resolveSortField(table: Table, name: string): { column: Column; related: RelatedStep[] } {
  const own = table.columnsByName.get(name);
  if (own) return { column: own, related: [] };
  const segments = name.split('.');
  if (segments.length < 2 || relationsNamed(table, segments[0]!).length === 0) return { column: resolveColumn(table, name, '`sort`'), related: [] };
  if (segments.length - 1 > MAX_SORT_RELATIONS) {
    throw new GatewayError('PARSE_ERROR', `The \`sort\` entry \`${clip(name)}\` follows ${segments.length - 1} relations; at most ${MAX_SORT_RELATIONS} are accepted.`, {
      details: { limit: 'sort_relations', max: MAX_SORT_RELATIONS, given: segments.length - 1 },
    });
  }
  const related: RelatedStep[] = [];
  let at = table;
  for (const spelled of segments.slice(0, -1)) {
    const relation = toOne(at, spelled);
    related.push(Object.freeze({ relation, spelled }));
    at = relation.target;
  }
  return { column: resolveColumn(at, segments[segments.length - 1]!, '`sort`'), related };
}

function toOne(table: Table, name: string): Relation {
  const candidates = relationsNamed(table, name);
  if (candidates.length === 0) {
    throw new GatewayError('UNKNOWN_RELATION', `Table \`${table.name}\` has no relation \`${clip(name)}\` to sort by.`, { details: { table: table.name, relation: clip(name) } });
  }
  const usable = candidates.filter((c) => c.relation.cardinality === 'one');
  if (usable.length === 0) {
    throw new GatewayError('PARSE_ERROR', `\`${clip(name)}\` is a one-to-many relation of \`${table.name}\`; \`sort\` follows only to-one relations (each row has at most one related row).`, {
      details: { table: table.name, relation: clip(name) },
    });
  }
  if (usable.length > 1) {
    const names = usable.map((c) => c.relation.name).sort();
    throw new GatewayError('PARSE_ERROR', `The relation name \`${clip(name)}\` is ambiguous on \`${table.name}\`: ${usable.length} foreign keys answer to it.`, {
      details: { table: table.name, relation: clip(name), candidates: names },
      hint: `Name one of: ${names.join(', ')}.`,
    });
  }
  return usable[0]!.relation;
}
