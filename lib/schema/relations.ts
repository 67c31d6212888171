/**
 * Relation naming (docs/relations.md, "Relation names"): the names under which a table's foreign keys can be expanded.
 * In: a schema-cache table. Out: every named relation, each a frozen `Relation`.
 * Never: invents a relation that is not a discovered foreign key.
 *
 * Names of a forward relation (this table holds the FK columns):
 *   - the referenced table's name (`orders` -> `users`);
 *   - for a one-column FK whose column ends in `_id`, the column without `_id` (`user_id` -> `user`),
 *     which tells several FKs to the same table apart (`shipments.sender_id` / `recipient_id`);
 *   - the FK constraint's name (the only unique name of a multi-column FK).
 * Names of a reverse relation (another table's FK points here):
 *   - the referencing table's name (`users` -> `orders`);
 *   - `<table>!<column without _id>` for a one-column FK (`shipments!sender`), after PostgREST's
 *     `!` disambiguation;
 *   - the FK constraint's name.
 * A reverse relation whose FK columns are unique in the referencing table is one-to-one.
 */
import type { ForeignKey, Relation, Table } from './schema-types';

export interface NamedRelation {
  /** The relation (its `name` is the preferred unambiguous name, see `preferredName`). */
  readonly relation: Relation;
  /** Every name the relation answers to. */
  readonly names: readonly string[];
}

const cache = new WeakMap<Table, readonly NamedRelation[]>();

/** All relations of `table`, forward first, in the schema cache's FK order (cached per table). */
export function relationsOf(table: Table): readonly NamedRelation[] {
  const known = cache.get(table);
  if (known) return known;
  const all: NamedRelation[] = [];
  for (const fk of table.foreignKeys) {
    all.push(named(fk, 'forward', fk.referencedTable, 'one', [fk.referencedTable.name, ...stemOf(fk), fk.name]));
  }
  for (const fk of table.referencedBy) {
    const oneToOne = fk.table.uniqueKeys.some((k) => k.columns.length === fk.columns.length && k.columns.every((c) => fk.columns.includes(c)));
    all.push(named(fk, 'reverse', fk.table, oneToOne ? 'one' : 'many', [fk.table.name, ...stemOf(fk).map((s) => `${fk.table.name}!${s}`), fk.name]));
  }
  // The preferred name of each relation is its first name that no other relation shares.
  const counts = new Map<string, number>();
  for (const r of all) for (const n of r.names) counts.set(n, (counts.get(n) ?? 0) + 1);
  const result = Object.freeze(
    all.map((r) => {
      const preferred = r.names.find((n) => counts.get(n) === 1) ?? r.names[r.names.length - 1]!;
      return Object.freeze({ relation: Object.freeze({ ...r.relation, name: preferred }), names: r.names });
    }),
  );
  cache.set(table, result);
  return result;
}

/** The relations answering to `name` (several when the name is ambiguous). */
export function relationsNamed(table: Table, name: string): NamedRelation[] {
  return relationsOf(table).filter((r) => r.names.includes(name));
}

/** Every name of every relation of the table (for "did you mean" hints). */
export function relationNames(table: Table): string[] {
  return [...new Set(relationsOf(table).flatMap((r) => r.names))];
}

function stemOf(fk: ForeignKey): string[] {
  const only = fk.columns.length === 1 ? fk.columns[0] : undefined;
  if (only === undefined || !only.name.endsWith('_id') || only.name.length <= 3) return [];
  return [only.name.slice(0, -3)];
}

function named(fk: ForeignKey, direction: Relation['direction'], target: Table, cardinality: Relation['cardinality'], names: string[]): NamedRelation {
  return { relation: { name: names[0]!, foreignKey: fk, direction, target, cardinality }, names: [...new Set(names)] };
}
