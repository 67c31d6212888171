/**
 * The part of the schema cache one caller may see (docs/openapi.md, "What a caller sees"), shared
 * by the OpenAPI document and the TypeScript types.
 *
 * In: the schema cache and the caller's `CallerAccess`. Out: the tables reachable by their URL
 * name that the caller may read, each with the columns it may read, insert, update and get back
 * from a write; the callable functions; and the names of the enums they use. Never: keeps a
 * table or column the caller may not read.
 */
import type { Column, DbFunction, PgType, SchemaCache, Table } from '../schema/schema-types';
import type { CallerAccess, TableAccess } from './caller-access';

export interface DescribedTable {
  readonly table: Table;
  readonly access: TableAccess;
  /** Readable columns, in table order: the row. */
  readonly readColumns: readonly Column[];
  /** Columns an insert may set: readable and writable, not generated, not GENERATED ALWAYS AS IDENTITY. */
  readonly insertColumns: readonly Column[];
  /** Columns an update may set (the same rule). */
  readonly updateColumns: readonly Column[];
  /** Columns a write may return: readable and returnable. */
  readonly returnColumns: readonly Column[];
  /** What PostgreSQL accepts on the relation (a plain view that cannot be updated takes nothing). */
  readonly writable: { readonly insert: boolean; readonly update: boolean; readonly delete: boolean };
}

const ALL_WRITES = Object.freeze({ insert: true, update: true, delete: true });

export function describedTables(schema: SchemaCache, access: CallerAccess): DescribedTable[] {
  const out: DescribedTable[] = [];
  for (const table of schema.tables) {
    // A table whose name an earlier schema also has is not reachable by URL.
    if (schema.tablesByName.get(table.name) !== table) continue;
    const granted = access(table);
    if (granted === null || !granted.operations.has('read')) continue;
    const readColumns = table.columns.filter((c) => granted.readable(c.name));
    if (readColumns.length === 0) continue;
    const settable = readColumns.filter((c) => granted.writable(c.name) && !c.generated && c.identity !== 'a');
    out.push(
      Object.freeze({
        table,
        access: granted,
        readColumns,
        insertColumns: settable,
        updateColumns: settable,
        returnColumns: readColumns.filter((c) => granted.returnable(c.name)),
        writable: table.writes ?? ALL_WRITES,
      }),
    );
  }
  return out;
}

/** Functions the gateway's role may execute (those /_rpc/contracts lists) and the caller may call. */
export function describedFunctions(schema: SchemaCache, callable: ((fn: DbFunction) => boolean) | undefined): DbFunction[] {
  return schema.functions.filter((f) => f.executable && (callable === undefined || callable(f)));
}

/**
 * The enums the described columns and functions use, by oid -> name: the type's name, or
 * `schema.name` when two used enums share a name.
 */
export function enumNames(schema: SchemaCache, tables: readonly DescribedTable[], functions: readonly DbFunction[]): Map<number, string> {
  const found = new Map<number, PgType>();
  const visit = (oid: number, depth: number): void => {
    const type = schema.types?.get(oid);
    if (type === undefined || depth > 16) return;
    if (type.typtype === 'e') found.set(oid, type);
    if (type.baseOid !== null) visit(type.baseOid, depth + 1);
    if (type.elementOid !== null) visit(type.elementOid, depth + 1);
    for (const a of type.attributes) visit(a.typeOid, depth + 1);
  };
  for (const t of tables) for (const c of t.readColumns) visit(c.typeOid, 0);
  for (const f of functions) {
    for (const a of f.args) visit(a.typeOid, 0);
    for (const c of f.resultColumns) visit(c.typeOid, 0);
    visit(f.returnTypeOid, 0);
  }
  const count = new Map<string, number>();
  for (const t of found.values()) count.set(t.name, (count.get(t.name) ?? 0) + 1);
  const names = new Map<number, string>();
  for (const [oid, t] of [...found].sort((a, b) => (a[1].name < b[1].name ? -1 : a[1].name > b[1].name ? 1 : a[0] - b[0]))) {
    names.set(oid, count.get(t.name) === 1 ? t.name : `${t.schema}.${t.name}`);
  }
  return names;
}
