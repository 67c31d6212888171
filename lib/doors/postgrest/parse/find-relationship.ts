/**
 * Embedding's relationship lookup, as PostgREST does it (docs/postgrest-dialect.md, "Embedding").
 * In: the table of the level above, the target as the caller wrote it (a table of the same
 * schema, or a foreign key's constraint or column name), and the `!hint`s that are not join
 * types. Out: one link (a foreign key either way, or a junction table for many-to-many) and its
 * cardinality. Several candidates: PGRST201 (300) listing them, so the caller adds `!hint`; none:
 * PGRST200. Never: invents a relationship that is not a discovered foreign key, or one inferred
 * through a view (docs/postgrest-dialect.md#embedding-through-views).
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
  const matching = (hint === null ? all : all.filter((c) => matchesHint(c, hint))).sort(postgrestOrder);
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
  const related = (t: Table) => fksOf(t).length > 0 || refsOf(t).length > 0 || t.computedRelations !== undefined;
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
  const targets = new Set<Table>([...fksOf(source).map((fk) => fk.referencedTable), ...refsOf(source).map((fk) => fk.table)]);
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
      for (const fk of refsOf(source)) if (fk.table === source) out.push(direct(fk, 'reverse', source));
      return out;
    }
    for (const fk of fksOf(source)) if (fk.referencedTable === target) out.push(direct(fk, 'forward', target));
    for (const fk of refsOf(source)) if (fk.table === target) out.push(direct(fk, 'reverse', target));
    for (const junction of junctions(schema, source, target)) out.push({ link: { kind: 'junction', junction }, target, cardinality: 'many' });
    return out;
  }
  // The target named by a foreign key of the source: its constraint name or its (one) column;
  // never another view reached that way (PostgREST requires a view's name), but a view's own
  // parent through a self-reference (`job?select=parent_id(*)`), as PostgREST allows.
  for (const fk of fksOf(source)) {
    if (isView(fk.referencedTable) && fk.referencedTable !== source) continue;
    if (fk.name === name || (fk.columns.length === 1 && fk.columns[0]!.name === name)) out.push(direct(fk, 'forward', fk.referencedTable));
  }
  for (const fk of refsOf(source)) if (fk.name === name && !isView(fk.table)) out.push(direct(fk, 'reverse', fk.table));
  return out;
}

// Both lists per relation, made once per schema cache (a reload makes new tables).
const allKeys = new WeakMap<Table, { readonly fks: readonly ForeignKey[]; readonly refs: readonly ForeignKey[] }>();

function keysOf(t: Table): { readonly fks: readonly ForeignKey[]; readonly refs: readonly ForeignKey[] } {
  let keys = allKeys.get(t);
  if (keys === undefined) {
    keys = t.inferred ? { fks: [...t.foreignKeys, ...t.inferred.foreignKeys], refs: [...t.referencedBy, ...t.inferred.referencedBy] } : { fks: t.foreignKeys, refs: t.referencedBy };
    allKeys.set(t, keys);
  }
  return keys;
}

/** A relation's foreign keys, declared then inferred through views. */
const fksOf = (t: Table): readonly ForeignKey[] => keysOf(t).fks;

/** The foreign keys referencing a relation, declared then inferred through views. */
const refsOf = (t: Table): readonly ForeignKey[] => keysOf(t).refs;

const isView = (t: Table): boolean => t.kind === 'v' || t.kind === 'm';

function direct(fk: ForeignKey, direction: 'forward' | 'reverse', target: Table): FoundLink {
  const cardinality = direction === 'forward' || isUnique(fk.table, fk) ? 'one' : 'many';
  const relation: Relation = { name: fk.name, foreignKey: fk, direction, target, cardinality };
  return { link: { kind: 'fk', relation }, target, cardinality };
}

function isUnique(table: Table, fk: ForeignKey): boolean {
  if (fk.inferred) return fk.inferred.oneToOne;
  return table.uniqueKeys.some((k) => k.columns.length === fk.columns.length && k.columns.every((c) => fk.columns.includes(c)));
}

/**
 * Junction tables between source and target: a table of the schema with a foreign key to each
 * whose columns are all part of one of its unique keys (its primary key, usually), as PostgREST
 * requires of a many-to-many junction; a view with foreign keys inferred to each whose columns
 * are all part of its inferred primary key.
 */
function junctions(schema: SchemaCache, source: Table, target: Table): Junction[] {
  const out: Junction[] = [];
  for (const table of schema.tables) {
    if (table.schema !== source.schema || table === source || table === target) continue;
    const fks = fksOf(table);
    const keys = table.inferred?.primaryKey.length ? [...table.uniqueKeys.map((k) => k.columns), table.inferred.primaryKey] : table.uniqueKeys.map((k) => k.columns);
    for (const toSource of fks) {
      if (toSource.referencedTable !== source) continue;
      for (const toTarget of fks) {
        if (toTarget === toSource || toTarget.referencedTable !== target) continue;
        const keyed = keys.some((k) => [...toSource.columns, ...toTarget.columns].every((c) => k.includes(c)));
        if (keyed) out.push({ table, toSource, toTarget });
      }
    }
  }
  return out;
}

function matchesHint(c: FoundLink, hint: string): boolean {
  if (c.link.kind === 'computed') return true;
  // As PostgREST's findRel: a many-to-many by its junction table's name only; a foreign key by its
  // constraint name or, when it has one column, by that column on either side (`clients!client_id`,
  // `clients!id`); a composite key by its constraint name only.
  if (c.link.kind === 'junction') return c.link.junction.table.name === hint;
  const fk = c.link.relation.foreignKey;
  // A self-reference's children take the FK column as hint (`reports:staff!manager_id(*)`), only.
  if (fk.table === fk.referencedTable) return fk.columns.length === 1 && fk.columns[0]!.name === hint;
  return fk.name === hint || (fk.columns.length === 1 && (fk.columns[0]!.name === hint || fk.referencedColumns[0]!.name === hint));
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

/**
 * PostgREST's order of candidates (PGRST201's `details`, docs/postgrest-dialect.md#embedding): its
 * schema cache keeps the relationships of a table sorted (the derived order of its `Relationship`
 * type): by the target table, then
 * one-to-many, many-to-one, one-to-one, many-to-many, then by constraint name and columns (a
 * junction by its table, then its two constraints and their columns), then tables before views.
 */
function postgrestOrder(a: FoundLink, b: FoundLink): number {
  const x = sortKey(a);
  const y = sortKey(b);
  for (let i = 0; i < x.length; i++) {
    const c = compare(x[i]!, y[i]!);
    if (c !== 0) return c;
  }
  return 0;
}

type Key = string | number | readonly Key[];

function compare(a: Key, b: Key): number {
  if (Array.isArray(a) && Array.isArray(b)) {
    for (let i = 0; i < Math.min(a.length, b.length); i++) {
      const c = compare(a[i]!, b[i]!);
      if (c !== 0) return c;
    }
    return a.length - b.length;
  }
  return a < b ? -1 : a > b ? 1 : 0;
}

function sortKey(c: FoundLink): Key[] {
  const pairs = (left: readonly { readonly name: string }[], right: readonly { readonly name: string }[]): Key => left.map((l, i) => [l.name, right[i]?.name ?? '']);
  const views = (from: Table, to: Table): Key => [isView(from) ? 1 : 0, isView(to) ? 1 : 0];
  if (c.link.kind === 'junction') {
    const j = c.link.junction;
    const source = j.toSource.referencedTable;
    return [c.target.schema, c.target.name, source === c.target ? 1 : 0, 3, [j.table.schema, j.table.name], j.toSource.name, j.toTarget.name,
      pairs(j.toSource.referencedColumns, j.toSource.columns), pairs(j.toTarget.referencedColumns, j.toTarget.columns), views(source, c.target)];
  }
  // A computed relationship is never a candidate (findRelationship returns it first); by name, for completeness.
  if (c.link.kind === 'computed') return [c.target.schema, c.target.name, 0, 4, c.link.relation.name];
  const r = c.link.relation;
  const fk = r.foreignKey;
  const unique = isUnique(fk.table, fk);
  const forward = r.direction === 'forward';
  const rank = unique ? 2 : forward ? 1 : 0;
  const columns = forward ? pairs(fk.columns, fk.referencedColumns) : pairs(fk.referencedColumns, fk.columns);
  const from = forward ? fk.table : fk.referencedTable;
  return [c.target.schema, c.target.name, fk.table === fk.referencedTable ? 1 : 0, rank, fk.name, columns, unique ? (forward ? 0 : 1) : 0, views(from, c.target)];
}
