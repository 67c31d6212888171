/**
 * Embedding's relationship lookup, as PostgREST does it (docs/postgrest-dialect.md, "Embedding").
 * In: the table of the level above, the target as the caller wrote it (a table of the same
 * schema, or a foreign key's constraint or column name), and the `!hint`s that are not join
 * types. Out: one link (a foreign key either way, or a junction table for many-to-many) and its
 * cardinality. Several candidates: PGRST201 (300) listing them, so the caller adds `!hint`; none:
 * PGRST200. Never: invents a relationship that is not a discovered foreign key.
 */
import type { EmbedLink, Junction } from '../../../command/command';
import { PostgrestError } from '../postgrest-error';
import type { ForeignKey, Relation, SchemaCache, Table } from '../../../schema/schema-types';

export interface FoundLink {
  readonly link: EmbedLink;
  readonly target: Table;
  readonly cardinality: 'one' | 'many';
}

export function findRelationship(schema: SchemaCache, source: Table, name: string, hint: string | null): FoundLink {
  const all = candidates(schema, source, name);
  const matching = hint === null ? all : all.filter((c) => matchesHint(c, hint));
  if (matching.length === 1) return matching[0]!;
  if (matching.length === 0) {
    throw new PostgrestError('PGRST200', `Could not find a relationship between '${source.name}' and '${name}' in the schema cache`, {
      details: `Searched for a foreign key relationship between '${source.name}' and '${name}'${hint === null ? '' : ` using the hint '${hint}'`} in the schema '${source.schema}', but no matches were found.`,
      hint: 'Embed a table of the same schema that a foreign key links to this one, or name the foreign key with !hint.',
    });
  }
  throw new PostgrestError('PGRST201', `Could not embed because more than one relationship was found for '${source.name}' and '${name}'`, {
    details: JSON.stringify(matching.map(describe)),
    hint: `Try changing '${name}' to one of the following: ${matching.map((c) => `'${name}!${hintFor(c)}'`).join(', ')}. Find the desired relationship in the 'details' key.`,
  });
}

function candidates(schema: SchemaCache, source: Table, name: string): FoundLink[] {
  const out: FoundLink[] = [];
  const target = schema.tables.find((t) => t.schema === source.schema && t.name === name);
  if (target) {
    for (const fk of source.foreignKeys) if (fk.referencedTable === target) out.push(direct(fk, 'forward', target));
    for (const fk of source.referencedBy) if (fk.table === target && !(target === source && out.some((c) => c.link.kind === 'fk' && c.link.relation.foreignKey === fk))) out.push(direct(fk, 'reverse', target));
    for (const junction of junctions(schema, source, target)) out.push({ link: { kind: 'junction', junction }, target, cardinality: 'many' });
    return out;
  }
  // The target named by a foreign key of the source: its constraint name or its (one) column.
  for (const fk of source.foreignKeys) {
    if (fk.name === name || (fk.columns.length === 1 && fk.columns[0]!.name === name)) out.push(direct(fk, 'forward', fk.referencedTable));
  }
  for (const fk of source.referencedBy) if (fk.name === name) out.push(direct(fk, 'reverse', fk.table));
  return out;
}

function direct(fk: ForeignKey, direction: 'forward' | 'reverse', target: Table): FoundLink {
  const cardinality = direction === 'forward' || isUnique(fk.table, fk) ? 'one' : 'many';
  const relation: Relation = { name: fk.name, foreignKey: fk, direction, target, cardinality };
  return { link: { kind: 'fk', relation }, target, cardinality };
}

function isUnique(table: Table, fk: ForeignKey): boolean {
  return table.uniqueKeys.some((k) => k.columns.length === fk.columns.length && k.columns.every((c) => fk.columns.includes(c)));
}

/**
 * Junction tables between source and target: a table of the schema with a foreign key to each
 * whose columns are all part of one of its unique keys (its primary key, usually), as PostgREST
 * requires of a many-to-many junction.
 */
function junctions(schema: SchemaCache, source: Table, target: Table): Junction[] {
  const out: Junction[] = [];
  for (const table of schema.tables) {
    if (table.schema !== source.schema || table === source || table === target) continue;
    for (const toSource of table.foreignKeys) {
      if (toSource.referencedTable !== source) continue;
      for (const toTarget of table.foreignKeys) {
        if (toTarget === toSource || toTarget.referencedTable !== target) continue;
        const keyed = table.uniqueKeys.some((k) => [...toSource.columns, ...toTarget.columns].every((c) => k.columns.includes(c)));
        if (keyed) out.push({ table, toSource, toTarget });
      }
    }
  }
  return out;
}

function matchesHint(c: FoundLink, hint: string): boolean {
  if (c.link.kind === 'junction') {
    const j = c.link.junction;
    return j.table.name === hint || j.toSource.name === hint || j.toTarget.name === hint;
  }
  const fk = c.link.relation.foreignKey;
  return fk.name === hint || fk.columns.some((col) => col.name === hint) || fk.referencedColumns.some((col) => col.name === hint && c.link.kind === 'fk' && c.link.relation.direction === 'forward');
}

function hintFor(c: FoundLink): string {
  return c.link.kind === 'junction' ? c.link.junction.table.name : c.link.relation.foreignKey.name;
}

function describe(c: FoundLink): Record<string, string> {
  if (c.link.kind === 'junction') {
    const j = c.link.junction;
    return { cardinality: 'many-to-many', embedding: `${j.toSource.referencedTable.name} with ${c.target.name}`, relationship: `${j.table.name} using ${j.toSource.name}, ${j.toTarget.name}` };
  }
  const r = c.link.relation;
  const kind = r.direction === 'forward' ? 'many-to-one' : c.cardinality === 'one' ? 'one-to-one' : 'one-to-many';
  const from = r.direction === 'forward' ? r.foreignKey.table : r.foreignKey.referencedTable;
  return { cardinality: kind, embedding: `${from.name} with ${c.target.name}`, relationship: `${r.foreignKey.name} using ${r.foreignKey.table.name}(${r.foreignKey.columns.map((x) => x.name).join(', ')}) and ${r.foreignKey.referencedTable.name}(${r.foreignKey.referencedColumns.map((x) => x.name).join(', ')})` };
}
