/**
 * Keys through views, as PostgREST infers them (docs/postgrest-dialect.md#embedding-through-views).
 *
 * In: the key dependencies of the exposed views (introspect-view-keys.ts) and the relations of the
 * schema cache by oid. Out: per relation, its `InferredKeys`, frozen: a view's primary key (the
 * first view column of each column of its base tables' primary keys), and for every foreign key
 * of a table whose columns (on one side or both) some exposed view exposes unchanged, one inferred
 * foreign key per pair of ends other than the two tables themselves: view -> table, table -> view
 * and view -> view, one per way of choosing the view columns when a view repeats a key column, as
 * PostgREST's `addViewM2OAndO2ORels` does. Never: infers a key from a view column that is an
 * expression or from a key the view exposes only partly (the rows say so), nor a relation with an
 * end outside the exposed schemas.
 */
import type { RawViewKeyDependency } from './introspect-view-keys';
import type { Column, ForeignKey, InferredKeys, Table } from './schema-types';

interface End {
  readonly table: Table;
  readonly columns: readonly Column[];
  readonly base: boolean;
}

export function inferViewKeys(deps: readonly RawViewKeyDependency[], relations: ReadonlyMap<number, Table>): Map<Table, InferredKeys> {
  const keys = new Map<Table, { primaryKey: Column[]; foreignKeys: ForeignKey[]; referencedBy: ForeignKey[] }>();
  const of = (t: Table) => {
    let k = keys.get(t);
    if (!k) keys.set(t, (k = { primaryKey: [], foreignKeys: [], referencedBy: [] }));
    return k;
  };

  const byConstraint = new Map<number, RawViewKeyDependency[]>();
  for (const dep of deps) {
    const view = relations.get(dep.viewOid);
    if (view === undefined || (view.kind !== 'v' && view.kind !== 'm')) continue;
    if (dep.type === 'p') {
      const columns = dep.columns.map(([, names]) => view.columnsByName.get(names[0] ?? ''));
      if (columns.every((c): c is Column => c !== undefined)) of(view).primaryKey.push(...columns);
      continue;
    }
    const list = byConstraint.get(dep.constraintOid) ?? [];
    list.push(dep);
    byConstraint.set(dep.constraintOid, list);
  }

  for (const list of byConstraint.values()) {
    const fk = list[0]!.foreignKey;
    if (fk === null) continue;
    const holders = ends(list, 'f', relations, fk.tableOid, fk.columns);
    const targets = ends(list, 'f_ref', relations, fk.referencedTableOid, fk.referencedColumns);
    for (const from of holders) {
      for (const to of targets) {
        if (from.base && to.base) continue; // the table's own foreign key, already in the cache
        const inferred: ForeignKey = Object.freeze({
          name: list[0]!.constraintName,
          table: from.table,
          columns: Object.freeze([...from.columns]),
          referencedTable: to.table,
          referencedColumns: Object.freeze([...to.columns]),
          inferred: Object.freeze({ oneToOne: fk.oneToOne }),
        });
        of(from.table).foreignKeys.push(inferred);
        of(to.table).referencedBy.push(inferred);
      }
    }
  }

  const out = new Map<Table, InferredKeys>();
  for (const [table, k] of keys) {
    out.set(table, Object.freeze({ primaryKey: Object.freeze(k.primaryKey), foreignKeys: Object.freeze(k.foreignKeys), referencedBy: Object.freeze(k.referencedBy) }));
  }
  return out;
}

/**
 * The ends of one side of a foreign key: its table, when exposed, then each view exposing all the
 * side's columns, once per choice of view columns (a key column the view repeats gives several).
 */
function ends(list: readonly RawViewKeyDependency[], type: 'f' | 'f_ref', relations: ReadonlyMap<number, Table>, baseOid: number, baseColumns: readonly string[]): End[] {
  const out: End[] = [];
  const base = relations.get(baseOid);
  if (base !== undefined) {
    const columns = baseColumns.map((n) => base.columnsByName.get(n));
    if (columns.length > 0 && columns.every((c): c is Column => c !== undefined)) out.push({ table: base, columns, base: true });
  }
  for (const dep of list) {
    if (dep.type !== type) continue;
    const view = relations.get(dep.viewOid);
    if (view === undefined) continue;
    // In key order, the view columns of each key column: every combination is one end.
    let choices: Column[][] = [[]];
    for (const [, names] of dep.columns) {
      const columns = names.map((n) => view.columnsByName.get(n)).filter((c): c is Column => c !== undefined);
      choices = choices.flatMap((prefix) => columns.map((c) => [...prefix, c]));
    }
    for (const columns of choices) if (columns.length === baseColumns.length && columns.length > 0) out.push({ table: view, columns, base: false });
  }
  return out;
}
