/**
 * The discovered schema: plain frozen objects made only by `buildSchemaCache`. Stages after
 * `parse` hold references to these objects, never to names typed by the caller.
 */
export interface Column {
  readonly name: string;
  /** 1-based position (`pg_attribute.attnum`). */
  readonly position: number;
  /** `format_type()` text, e.g. `numeric(30,10)`, `text[]`, `timestamp with time zone`. */
  readonly type: string;
  /** Type OID of the column. */
  readonly typeOid: number;
  /** `pg_type.typcategory`: 'S' string, 'N' numeric, 'A' array, 'D' date/time, 'B' boolean, 'U' user... */
  readonly category: string;
  /** For arrays: the element type's `format_type()` text, else null. */
  readonly elementType: string | null;
  readonly nullable: boolean;
  readonly hasDefault: boolean;
  /** `a` (always) or `d` (by default) identity column, else ''. */
  readonly identity: '' | 'a' | 'd';
  /** Generated (stored) column: never writable. */
  readonly generated: boolean;
  /**
   * The type a caller's text value is cast to when it is compared with this column (filters,
   * keys, cursors): the column's type without its modifier, a domain replaced by its base type,
   * schema-qualified unless it is a pg_catalog type. A name PostgreSQL parses back to that type,
   * e.g. `integer`, `"bit"`, `kinds.pair`, `kinds.mood[]`; never `record`. Null when the
   * gateway's role may not name it (no USAGE on its schema): values are then bound untyped and
   * PostgreSQL infers their type from the column. docs/querying.md#column-types
   */
  readonly compareType: string | null;
  /** When the column's type is an array: its element type, in the same form (`contains`); else null. */
  readonly compareElementType: string | null;
  /** `compareType[]`, when `compareType` is named, not an array and has an array type (`in` binds its list as it); else null. */
  readonly compareListType: string | null;
  /**
   * The comparison operators (`=`, `<>`, `<`, `<=`, `>`, `>=`) of `compareType` that live outside
   * pg_catalog, with their schema (PostGIS's geometry installed in `extensions`): the compiler
   * writes them `OPERATOR(extensions.=)`, so they resolve whatever the request's search_path.
   * Absent when there are none (every built-in type). docs/querying.md#column-types
   */
  readonly operatorSchemas?: Readonly<Record<string, string>>;
  /**
   * Whether any `=` (equality), `<>` (inequality: its own or `NOT (=)`) and default btree ordering
   * (ordering: sort, cursors, <, >) apply to the type at all; absent when all do. xml has none,
   * point only `<>`: filters and sorts that need a missing one are refused with a 400 before any SQL.
   */
  readonly comparisons?: { readonly equality: boolean; readonly inequality: boolean; readonly ordering: boolean };
  /**
   * Set on a computed field only: the function (one argument of the table's row type, returning a
   * scalar) whose call on the row gives the value. docs/postgrest-dialect.md#computed-fields
   */
  readonly computed?: { readonly schema: string; readonly name: string; readonly fn: DbFunction };
}

export interface UniqueKey {
  readonly name: string;
  readonly columns: readonly Column[];
  readonly primary: boolean;
}

export interface ForeignKey {
  readonly name: string;
  /** The table holding the FK columns. */
  readonly table: Table;
  readonly columns: readonly Column[];
  /** The referenced table and columns, in matching order. */
  readonly referencedTable: Table;
  readonly referencedColumns: readonly Column[];
  /**
   * Set on a foreign key inferred through a view (`Table.inferred`): a table's constraint whose
   * columns, on one side or both, a view exposes unchanged. `oneToOne`: the constraint's columns
   * are a key of its own table. docs/postgrest-dialect.md#embedding-through-views
   */
  readonly inferred?: { readonly oneToOne: boolean };
}

/**
 * The keys a relation has through views, as PostgREST infers them (docs/postgrest-dialect.md#embedding-through-views):
 * a view inherits the primary key and foreign keys of the table columns it exposes unchanged. Only
 * the PostgREST dialect's embedding reads them; `primaryKey`, `foreignKeys` and `referencedBy` of
 * the relation itself stay what the catalog declares.
 */
export interface InferredKeys {
  /** A view's primary key, from its base tables' (empty for a table). */
  readonly primaryKey: readonly Column[];
  /** Inferred FKs whose columns are in this relation. */
  readonly foreignKeys: readonly ForeignKey[];
  /** Inferred FKs that reference this relation. */
  readonly referencedBy: readonly ForeignKey[];
}

/** A foreign key seen from one of its two tables: the name a caller uses for it and the table on the other side. */
export interface Relation {
  /** The name the caller used in `expand`, and the key of the expanded value in each row. */
  readonly name: string;
  readonly foreignKey: ForeignKey;
  readonly direction: 'forward' | 'reverse';
  /** The table on the other side. */
  readonly target: Table;
  /** `one` renders an object or null, `many` an array. */
  readonly cardinality: 'one' | 'many';
}

export interface Table {
  readonly schema: string;
  readonly name: string;
  /** 'r' table, 'p' partitioned table, 'v' view, 'm' materialized view, 'f' foreign table. */
  readonly kind: 'r' | 'p' | 'v' | 'm' | 'f';
  readonly oid: number;
  readonly columns: readonly Column[];
  readonly columnsByName: ReadonlyMap<string, Column>;
  /** Primary-key columns in key order; empty when the table has no primary key. */
  readonly primaryKey: readonly Column[];
  readonly uniqueKeys: readonly UniqueKey[];
  /** FKs whose columns live in this table (many-to-one / one-to-one). */
  readonly foreignKeys: readonly ForeignKey[];
  /** FKs of other tables that reference this table (one-to-many / one-to-one). */
  readonly referencedBy: readonly ForeignKey[];
  readonly rlsEnabled: boolean;
  readonly rlsForced: boolean;
  /**
   * Which writes PostgreSQL accepts on the relation (`pg_relation_is_updatable`, INSTEAD OF
   * triggers counted): a view that is not auto-updatable, or a materialized view, takes none.
   * Absent in a cache built without it. Used by the API descriptions (docs/openapi.md).
   */
  readonly writes?: { readonly insert: boolean; readonly update: boolean; readonly delete: boolean };
  /** Computed fields by name (never part of `columns`, so never of `*`); absent when there are none. */
  readonly computedFields?: ReadonlyMap<string, Column>;
  /** `pg_class.reltype`: the OID of the table's row type (what computed fields and relationships take); absent in a cache built without it. */
  readonly rowTypeOid?: number;
  /** Computed relationships from this table, by the function's name; absent when there are none. */
  readonly computedRelations?: ReadonlyMap<string, ComputedRelation>;
  /** Keys inferred through views (see `InferredKeys`); absent when there are none. */
  readonly inferred?: InferredKeys;
}

/**
 * A computed relationship: a function of the exposed schemas taking one argument of `source`'s row
 * type and returning rows of `target` (docs/postgrest-dialect.md, "Computed relationships").
 * To-one when it returns one row (not SETOF, or `SETOF ... ROWS 1`), else to-many.
 */
export interface ComputedRelation {
  /** The function's name: what the caller embeds. */
  readonly name: string;
  readonly fn: DbFunction;
  readonly source: Table;
  readonly target: Table;
  readonly cardinality: 'one' | 'many';
}

export interface FunctionArg {
  /** '' for an unnamed argument (callable positionally only). */
  readonly name: string;
  /** `format_type()` text: a type name PostgreSQL parses back to the same type. */
  readonly type: string;
  readonly typeOid: number;
  /** `pg_type.typcategory`: 'N' numeric, 'S' string, 'B' boolean, 'A' array, 'C' composite, 'U' user (json, jsonb, uuid), ... */
  readonly category: string;
  readonly mode: 'i' | 'o' | 'b' | 'v' | 't';
  readonly hasDefault: boolean;
  readonly variadic: boolean;
}

/** One column of the rows a function returns. */
export interface ResultColumn {
  readonly name: string;
  readonly type: string;
  readonly typeOid: number;
}

export interface DbFunction {
  readonly schema: string;
  readonly name: string;
  readonly oid: number;
  /** `pg_get_function_identity_arguments()` text. */
  readonly identityArgs: string;
  /** Input arguments, in order. */
  readonly args: readonly FunctionArg[];
  readonly defaults: number;
  readonly variadic: boolean;
  readonly returnType: string;
  readonly returnTypeOid: number;
  readonly returnsSet: boolean;
  /** `pg_proc.prorows` (`ROWS n`): 1 makes a SETOF function a to-one computed relationship; absent in hand-made rows. */
  readonly rows?: number;
  /**
   * What a call yields: `scalar` values, `row`s with `resultColumns` (composite type, OUT or TABLE
   * parameters), or nothing (`void`).
   */
  readonly returns: 'scalar' | 'row' | 'void';
  /** The columns of a `row` result, in order; empty otherwise. */
  readonly resultColumns: readonly ResultColumn[];
  readonly volatility: 'i' | 's' | 'v';
  /** The gateway's role had EXECUTE on it at discovery (only these are listed by /_rpc/contracts). */
  readonly executable: boolean;
}

export interface SchemaCache {
  /** Configured schemas in resolution order. */
  readonly schemas: readonly string[];
  readonly tables: readonly Table[];
  /** Name -> table; the first schema in `schemas` that has the name wins. */
  readonly tablesByName: ReadonlyMap<string, Table>;
  readonly functions: readonly DbFunction[];
  readonly loadedAt: Date;
  /**
   * The types the exposed columns and functions use, by oid (array elements, domain bases and
   * composite attributes included), for describing the API (docs/openapi.md). Absent in a cache
   * built without them: descriptions then fall back to each column's category.
   */
  readonly types?: ReadonlyMap<number, PgType>;
}

/** One PostgreSQL type as the API descriptions need it (lib/describe/json-schema-of-type.ts). */
export interface PgType {
  readonly oid: number;
  readonly schema: string;
  readonly name: string;
  /** `pg_type.typtype`: 'b' base, 'c' composite, 'd' domain, 'e' enum, 'p' pseudo, 'r' range, 'm' multirange. */
  readonly typtype: string;
  /** `pg_type.typcategory`. */
  readonly category: string;
  /** Arrays: the element type's oid; else null. */
  readonly elementOid: number | null;
  /** Domains: the base type's oid; else null. */
  readonly baseOid: number | null;
  /** Enums: the labels in sort order. */
  readonly labels: readonly string[];
  /** Composites: the attributes in order. */
  readonly attributes: readonly { readonly name: string; readonly typeOid: number }[];
}
