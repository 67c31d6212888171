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
import { fuzzyMatches } from './fuzzy-match';
import { suggestName, tableCandidates, type NameHint } from '../../../errors/name-hint';
import type { ForeignKey, Relation, SchemaCache, Table } from '../../../schema/schema-types';

export interface FoundLink {
  readonly link: EmbedLink;
  readonly target: Table;
  readonly cardinality: 'one' | 'many';
}

export function findRelationship(schema: SchemaCache, source: Table, name: string, hint: string | null): FoundLink {
  // A computed relationship of that name wins over any foreign key, whatever the hint, as in PostgREST.
  const computed = source.computedRelations?.get(name);
  if (computed !== undefined) return { link: { kind: 'computed', relation: computed }, target: computed.target, cardinality: computed.cardinality };
  const all = candidates(schema, source, name);
  const matching = hint === null ? all : all.filter((c) => matchesHint(c, hint));
  if (matching.length === 1) return matching[0]!;
  if (matching.length === 0) {
    throw new PostgrestError('PGRST200', `Could not find a relationship between '${source.name}' and '${name}' in the schema cache`, {
      details: `Searched for a foreign key relationship between '${source.name}' and '${name}'${hint === null ? '' : ` using the hint '${hint}'`} in the schema '${source.schema}', but no matches were found.`,
      ...noRelationshipHint(schema, source, name),
    });
  }
  throw new PostgrestError('PGRST201', `Could not embed because more than one relationship was found for '${source.name}' and '${name}'`, {
    details: matching.map(describe),
    // PostgREST names the target table in each spelling, whatever the caller wrote (a column or a constraint).
    hint: `Try changing '${name}' to one of the following: ${matching.map((c) => `'${c.target.name}!${hintFor(c)}'`).join(', ')}. Find the desired relationship in the 'details' key.`,
  });
}

/**
 * PGRST200's hint as PostgREST writes it: the closest table related to the source when the target
 * is misspelt; when the source has no relationship at all, the closest table that has one; no hint
 * when the target is a related table (the `!hint` is what matched nothing) or nothing is close.
 * Only tables the caller may read are named (a NameHint, narrowed by the request handler:
 * docs/security.md, "Names a caller cannot see").
 */
function noRelationshipHint(schema: SchemaCache, source: Table, name: string): { hint?: string; names: NameHint } {
  // A computed relationship counts as a relationship, its target table as a child (as in PostgREST).
  const related = (t: Table) => t.foreignKeys.length > 0 || t.referencedBy.length > 0 || t.computedRelations !== undefined;
  if (related(source)) {
    const computedTargets = [...(source.computedRelations?.values() ?? [])].map((r) => r.target);
    const children = () => [...new Set([...candidatesOf(schema, source).map((c) => c.target), ...computedTargets])].map((t) => [t.name, t] as const);
    return suggestName(name, tableCandidates(children), (near) => `Perhaps you meant '${near}' instead of '${name}'.`, (input, names) => fuzzyMatches(names, input).find(([score]) => score < 1)?.[1]);
  }
  const parents = () => schema.tables.filter((t) => t.schema === source.schema && related(t)).map((t) => [t.name, t] as const);
  return suggestName(source.name, tableCandidates(parents), (near) => `Perhaps you meant '${near}' instead of '${source.name}'.`, (input, names) => fuzzyMatches(names, input)[0]?.[1]);
}

/** Every relationship of the source, to any table: PostgREST's list of the source's relationships. */
function candidatesOf(schema: SchemaCache, source: Table): FoundLink[] {
  const targets = new Set<Table>([...source.foreignKeys.map((fk) => fk.referencedTable), ...source.referencedBy.map((fk) => fk.table)]);
  for (const t of schema.tables) if (t.schema === source.schema && junctions(schema, source, t).length > 0) targets.add(t);
  return [...targets].flatMap((t) => candidates(schema, source, t.name));
}

function candidates(schema: SchemaCache, source: Table, name: string): FoundLink[] {
  const out: FoundLink[] = [];
  const target = schema.tables.find((t) => t.schema === source.schema && t.name === name);
  if (target) {
    // A self-reference by the table's own name is the one-to-many (the children), as PostgREST
    // decides; the parent is embedded by the FK column's name (`parent:manager_id(*)`).
    if (target === source) {
      for (const fk of source.referencedBy) if (fk.table === source) out.push(direct(fk, 'reverse', source));
      return out;
    }
    for (const fk of source.foreignKeys) if (fk.referencedTable === target) out.push(direct(fk, 'forward', target));
    for (const fk of source.referencedBy) if (fk.table === target) out.push(direct(fk, 'reverse', target));
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
  if (c.link.kind === 'computed') return true;
  if (c.link.kind === 'junction') {
    const j = c.link.junction;
    return j.table.name === hint || j.toSource.name === hint || j.toTarget.name === hint;
  }
  const fk = c.link.relation.foreignKey;
  // A self-reference's children take the FK column as hint (`reports:staff!manager_id(*)`), only.
  if (fk.table === fk.referencedTable) return fk.columns.length === 1 && fk.columns[0]!.name === hint;
  return fk.name === hint || fk.columns.some((col) => col.name === hint) || fk.referencedColumns.some((col) => col.name === hint && c.link.kind === 'fk' && c.link.relation.direction === 'forward');
}

function hintFor(c: FoundLink): string {
  if (c.link.kind === 'computed') return c.link.relation.name;
  return c.link.kind === 'junction' ? c.link.junction.table.name : c.link.relation.foreignKey.name;
}

/**
 * One candidate as PostgREST's PGRST201 `details` show it: the parent's columns first, then the
 * target's, whichever side holds the foreign key; one-to-one when the FK columns are unique,
 * either way; a junction by its two constraints and their columns.
 */
function describe(c: FoundLink): Record<string, string> {
  const cols = (columns: readonly { readonly name: string }[]) => `(${columns.map((x) => x.name).join(', ')})`;
  if (c.link.kind === 'junction') {
    const j = c.link.junction;
    return { cardinality: 'many-to-many', embedding: `${j.toSource.referencedTable.name} with ${c.target.name}`, relationship: `${j.table.name} using ${j.toSource.name}${cols(j.toSource.columns)} and ${j.toTarget.name}${cols(j.toTarget.columns)}` };
  }
  if (c.link.kind === 'computed') return { cardinality: c.cardinality === 'one' ? 'many-to-one' : 'one-to-many', embedding: `${c.link.relation.source.name} with ${c.target.name}`, relationship: `${c.link.relation.fn.name}` };
  const r = c.link.relation;
  const fk = r.foreignKey;
  const unique = isUnique(fk.table, fk);
  const kind = unique ? 'one-to-one' : r.direction === 'forward' ? 'many-to-one' : 'one-to-many';
  const [from, fromCols, to, toCols] = r.direction === 'forward' ? [fk.table, fk.columns, fk.referencedTable, fk.referencedColumns] : [fk.referencedTable, fk.referencedColumns, fk.table, fk.columns];
  return { cardinality: kind, embedding: `${from.name} with ${c.target.name}`, relationship: `${fk.name} using ${from.name}${cols(fromCols)} and ${to.name}${cols(toCols)}` };
}
