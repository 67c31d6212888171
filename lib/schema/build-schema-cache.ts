/**
 * Turns catalog rows into the schema cache: cross-linked, deep-frozen objects.
 *
 * In: `RawSchema` rows and the configured schemas in resolution order. Out: a `SchemaCache` whose
 * tables, columns, keys and functions are the only references later stages hold. A `ForeignKey`
 * is one object shared by `table.foreignKeys` and `referencedTable.referencedBy`, so identity
 * comparison works across both directions. Table <-> ForeignKey is a cycle, so everything is
 * built mutable first and frozen only at the end. Never throws on odd rows (a catalog change
 * between two introspection queries): rows that do not fit are skipped.
 */
import { inferViewKeys } from './infer-view-keys';
import type { RawColumn, RawConstraint, RawFunction, RawRelation, RawSchema } from './introspect';
import type { Column, ComputedRelation, DbFunction, ForeignKey, FunctionArg, PgType, ResultColumn, SchemaCache, Table, UniqueKey } from './schema-types';

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

interface Draft {
  readonly table: Table;
  readonly columns: Column[];
  readonly columnsByName: Map<string, Column>;
  readonly primaryKey: Column[];
  readonly uniqueKeys: UniqueKey[];
  readonly foreignKeys: ForeignKey[];
  readonly referencedBy: ForeignKey[];
}

const TABLE_KINDS: ReadonlySet<string> = new Set(['r', 'p', 'v', 'm', 'f']);
const INPUT_MODES: ReadonlySet<string> = new Set(['i', 'b', 'v']);
const SYSTEM_SCHEMAS: ReadonlySet<string> = new Set(['pg_catalog', 'information_schema']);

// Object.freeze does not stop Map#set; a stage mutating the shared cache would corrupt every request.
function lockMap<K, V>(map: Map<K, V>): ReadonlyMap<K, V> {
  const refuse = (): never => {
    throw new TypeError('the schema cache is read-only');
  };
  for (const method of ['set', 'delete', 'clear']) Object.defineProperty(map, method, { value: refuse });
  return Object.freeze(map);
}

function toColumn(raw: RawColumn): Column {
  const identity = raw.identity === 'a' || raw.identity === 'd' ? raw.identity : '';
  return {
    name: raw.name,
    position: raw.position,
    type: raw.type,
    typeOid: raw.typeOid,
    category: raw.category,
    elementType: raw.elementType,
    nullable: !raw.notNull,
    // Identity columns get their value without a pg_attrdef row (atthasdef is false), but an
    // INSERT may omit them all the same.
    hasDefault: raw.hasDefault || identity !== '',
    identity,
    generated: raw.generated !== '',
    compareType: raw.compareUsable ? raw.compareType : null,
    compareElementType: raw.compareElementType,
    compareListType: raw.compareUsable && raw.compareElementType === null && raw.compareHasArray ? `${raw.compareType}[]` : null,
    ...operatorFacts(raw),
  };
}

/** Column.operatorSchemas and Column.comparisons, resolved once per schema load; absent in the common case. */
function operatorFacts(raw: RawColumn): Pick<Column, 'operatorSchemas' | 'comparisons'> {
  const outside = Object.entries(raw.compareOperators ?? {}).filter(([, schema]) => schema !== 'pg_catalog');
  const equality = raw.compareHasEquality !== false;
  const ordering = raw.compareSortable !== false;
  const inequality = equality || raw.compareOperators?.['<>'] !== undefined;
  return {
    ...(outside.length ? { operatorSchemas: Object.freeze(Object.fromEntries(outside)) } : {}),
    ...(equality && ordering ? {} : { comparisons: Object.freeze({ equality, inequality, ordering }) }),
  };
}

function newDraft(raw: RawRelation): Draft {
  const draft = {
    columns: [] as Column[],
    columnsByName: new Map<string, Column>(),
    primaryKey: [] as Column[],
    uniqueKeys: [] as UniqueKey[],
    foreignKeys: [] as ForeignKey[],
    referencedBy: [] as ForeignKey[],
  };
  // The table shares the draft's arrays and map, so filling the draft fills the table.
  const table: Table = {
    schema: raw.schema,
    name: raw.name,
    kind: raw.kind as Table['kind'],
    oid: raw.oid,
    ...draft,
    rlsEnabled: raw.rlsEnabled,
    rlsForced: raw.rlsForced,
    ...(raw.rowTypeOid === undefined ? {} : { rowTypeOid: raw.rowTypeOid }),
    ...(raw.updatableEvents === undefined
      ? {}
      : { writes: Object.freeze({ insert: (raw.updatableEvents & 8) !== 0, update: (raw.updatableEvents & 4) !== 0, delete: (raw.updatableEvents & 16) !== 0 }) }),
  };
  return { table, ...draft };
}

/** Resolves names to columns; undefined when any name is unknown or the list is empty. */
function resolve(draft: Draft, names: readonly string[]): Column[] | undefined {
  const columns: Column[] = [];
  for (const name of names) {
    const column = draft.columnsByName.get(name);
    if (column === undefined) return undefined;
    columns.push(column);
  }
  return columns.length > 0 ? columns : undefined;
}

function addConstraint(raw: RawConstraint, drafts: ReadonlyMap<number, Draft>): void {
  const draft = drafts.get(raw.relationOid);
  if (draft === undefined) return;
  const columns = resolve(draft, raw.columns);
  if (columns === undefined) return;
  if (raw.type === 'f') {
    // A reference outside the configured schemas cannot be expanded or named: drop it.
    const target = raw.referencedRelationOid === null ? undefined : drafts.get(raw.referencedRelationOid);
    if (target === undefined) return;
    const referencedColumns = resolve(target, raw.referencedColumns);
    if (referencedColumns === undefined || referencedColumns.length !== columns.length) return;
    const fk: ForeignKey = { name: raw.name, table: draft.table, columns, referencedTable: target.table, referencedColumns };
    draft.foreignKeys.push(fk);
    target.referencedBy.push(fk);
    return;
  }
  const primary = raw.type === 'p';
  if (primary) {
    if (draft.primaryKey.length > 0) return;
    draft.primaryKey.push(...columns);
  }
  draft.uniqueKeys.push({ name: raw.name, columns, primary });
}

const VOID_OID = 2278;
const RECORD_OID = 2249;

/**
 * Null when the function cannot be called through the gateway: a polymorphic argument (its type
 * is only known from the call, so a JSON value cannot be converted to it), or a pseudo-type result
 * other than void and OUT/TABLE records (trigger, internal, `SETOF record` without a column list).
 */
function toFunction(raw: RawFunction): DbFunction | null {
  const args: Mutable<FunctionArg>[] = [];
  const outputs: ResultColumn[] = [];
  for (const [i, type] of raw.argTypes.entries()) {
    const mode = raw.argModes?.[i] ?? 'i';
    const kind = raw.argTypeKinds[i] ?? '';
    const typeOid = raw.argTypeOids[i] ?? 0;
    if (!INPUT_MODES.has(mode)) {
      outputs.push({ name: raw.argNames?.[i] || `column${outputs.length + 1}`, type, typeOid });
      continue;
    }
    if (kind.endsWith('p')) return null;
    if (mode === 'b') outputs.push({ name: raw.argNames?.[i] || `column${outputs.length + 1}`, type, typeOid });
    args.push({ name: raw.argNames?.[i] ?? '', type, typeOid, category: kind.charAt(0), mode: mode as FunctionArg['mode'], hasDefault: false, variadic: mode === 'v' });
  }
  // pronargdefaults counts the trailing input arguments that have defaults.
  for (let i = Math.max(0, args.length - raw.defaults); i < args.length; i++) {
    const arg = args[i];
    if (arg !== undefined) arg.hasDefault = true;
  }
  const attributes = raw.returnAttributes.map(([name, typeOid, type]): ResultColumn => ({ name, type, typeOid }));
  let returns: DbFunction['returns'];
  let resultColumns: ResultColumn[] = [];
  if (raw.returnTypeOid === VOID_OID) returns = 'void';
  else if (outputs.length > 0 && (raw.returnTypeOid === RECORD_OID || outputs.length === 1)) [returns, resultColumns] = ['row', outputs];
  else if (raw.returnTyptype === 'c' && attributes.length > 0) [returns, resultColumns] = ['row', attributes];
  else if (raw.returnTyptype === 'p') return null;
  else returns = 'scalar';
  const volatility = raw.volatility === 'i' || raw.volatility === 's' ? raw.volatility : 'v';
  return Object.freeze({
    schema: raw.schema,
    name: raw.name,
    oid: raw.oid,
    identityArgs: raw.identityArgs,
    args: Object.freeze(args.map((a) => Object.freeze(a))),
    defaults: raw.defaults,
    variadic: raw.variadic,
    returnType: raw.returnType,
    returnTypeOid: raw.returnTypeOid,
    returnsSet: raw.returnsSet,
    ...(raw.rows === undefined ? {} : { rows: raw.rows }),
    returns,
    resultColumns: Object.freeze(resultColumns.map((c) => Object.freeze(c))),
    volatility,
    executable: raw.executable,
  });
}

function freezeDraft(draft: Draft): void {
  draft.columns.forEach((c) => Object.freeze(c));
  Object.freeze(draft.columns);
  lockMap(draft.columnsByName);
  Object.freeze(draft.primaryKey);
  for (const key of draft.uniqueKeys) {
    Object.freeze(key.columns);
    Object.freeze(key);
  }
  Object.freeze(draft.uniqueKeys);
  // Each FK is frozen from its owning table; referencedBy only holds FKs owned by some draft.
  for (const fk of draft.foreignKeys) {
    Object.freeze(fk.columns);
    Object.freeze(fk.referencedColumns);
    Object.freeze(fk);
  }
  Object.freeze(draft.foreignKeys);
  Object.freeze(draft.referencedBy);
  Object.freeze(draft.table);
}

export function buildSchemaCache(raw: RawSchema, schemas: readonly string[]): SchemaCache {
  const order = new Map<string, number>();
  schemas.forEach((s, i) => {
    if (!order.has(s) && !SYSTEM_SCHEMAS.has(s)) order.set(s, i);
  });
  const rank = (schema: string): number => order.get(schema) ?? Number.MAX_SAFE_INTEGER;
  const byPlace = (a: { schema: string; name: string }, b: { schema: string; name: string }): number =>
    rank(a.schema) - rank(b.schema) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

  const drafts = new Map<number, Draft>();
  const relations = raw.relations.filter((r) => order.has(r.schema) && TABLE_KINDS.has(r.kind));
  for (const relation of [...relations].sort(byPlace)) {
    if (!drafts.has(relation.oid)) drafts.set(relation.oid, newDraft(relation));
  }

  const columns = [...raw.columns].sort((a, b) => a.relationOid - b.relationOid || a.position - b.position);
  for (const rawColumn of columns) {
    const draft = drafts.get(rawColumn.relationOid);
    if (draft === undefined || draft.columnsByName.has(rawColumn.name)) continue;
    const column = toColumn(rawColumn);
    draft.columns.push(column);
    draft.columnsByName.set(column.name, column);
  }

  // Primary keys first, then unique keys, then foreign keys, each by name: stable list order.
  const kindOrder = { p: 0, u: 1, f: 2 } as const;
  const constraints = raw.constraints
    .filter((c) => c.type in kindOrder)
    .sort((a, b) => kindOrder[a.type] - kindOrder[b.type] || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const constraint of constraints) addConstraint(constraint, drafts);
  const byOid = new Map([...drafts].map(([oid, d]) => [oid, d.table] as const));
  for (const [table, keys] of inferViewKeys(raw.viewKeys ?? [], byOid)) (table as Mutable<Table>).inferred = keys;

  const tables = [...drafts.values()].map((d) => d.table);
  const tablesByName = new Map<string, Table>();
  for (const table of tables) if (!tablesByName.has(table.name)) tablesByName.set(table.name, table);

  const functions = raw.functions
    .filter((f) => order.has(f.schema))
    .sort(byPlace)
    .map(toFunction)
    .filter((f): f is DbFunction => f !== null);
  for (const draft of drafts.values()) addComputedFields(draft, functions);
  addComputedRelations(drafts, functions);

  for (const draft of drafts.values()) freezeDraft(draft);

  const types = new Map<number, PgType>();
  for (const t of raw.types ?? []) {
    const attributes = Object.freeze(t.attributes.map(([name, typeOid]) => Object.freeze({ name, typeOid })));
    types.set(t.oid, Object.freeze({ ...t, labels: Object.freeze([...t.labels]), attributes }));
  }

  return Object.freeze({
    schemas: Object.freeze([...order.keys()]),
    tables: Object.freeze(tables),
    tablesByName: lockMap(tablesByName),
    functions: Object.freeze(functions),
    loadedAt: new Date(),
    ...(raw.types === undefined ? {} : { types: lockMap(types) }),
  });
}

/**
 * Computed fields: functions of the exposed schemas taking one argument of the table's row type
 * and returning one scalar. The argument is matched by the row type's OID, never by its name: a
 * type of the same name in another schema is another type. docs/postgrest-dialect.md#computed-fields
 */
function addComputedFields(draft: Draft, functions: readonly DbFunction[]): void {
  const t = draft.table;
  if (t.rowTypeOid === undefined) return;
  const fields = new Map<string, Column>();
  for (const f of functions) {
    if (f.args.length !== 1 || f.returns !== 'scalar' || f.returnsSet || f.args[0]!.typeOid !== t.rowTypeOid) continue;
    if (draft.columnsByName.has(f.name) || fields.has(f.name)) continue;
    fields.set(f.name, Object.freeze({
      name: f.name, position: 0, type: f.returnType, typeOid: f.returnTypeOid, category: 'U', elementType: null, nullable: true,
      hasDefault: false, identity: '' as const, generated: true, compareType: null, compareElementType: null, compareListType: null,
      computed: Object.freeze({ schema: f.schema, name: f.name, fn: f }),
    }));
  }
  if (fields.size > 0) (t as Mutable<Table>).computedFields = lockMap(fields);
}

/**
 * Computed relationships, as PostgREST finds them: a function of one argument of a table's row
 * type returning a table's row type (both matched by OID), to-one unless it returns a set of more
 * than one row (`ROWS 1`). The first function of a name wins (functions are in schema order), as
 * for computed fields. docs/postgrest-dialect.md#computed-relationships
 */
function addComputedRelations(drafts: ReadonlyMap<number, Draft>, functions: readonly DbFunction[]): void {
  const byRowType = new Map<number, Table>();
  for (const d of drafts.values()) if (d.table.rowTypeOid !== undefined) byRowType.set(d.table.rowTypeOid, d.table);
  const found = new Map<Table, Map<string, ComputedRelation>>();
  for (const fn of functions) {
    if (fn.args.length !== 1 || fn.returns !== 'row') continue;
    const source = byRowType.get(fn.args[0]!.typeOid);
    const target = byRowType.get(fn.returnTypeOid);
    if (source === undefined || target === undefined) continue;
    const own = found.get(source) ?? new Map<string, ComputedRelation>();
    found.set(source, own);
    if (own.has(fn.name)) continue;
    const cardinality = !fn.returnsSet || fn.rows === 1 ? 'one' : 'many';
    own.set(fn.name, Object.freeze({ name: fn.name, fn, source, target, cardinality }));
  }
  for (const [table, relations] of found) (table as Mutable<Table>).computedRelations = lockMap(relations);
}
