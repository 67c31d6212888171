/**
 * The typed command that `parse` produces and every later stage consumes. Kind-tagged so
 * stages `switch (command.kind)` exhaustively: adding a kind fails the build until every stage
 * handles it. Every name in here is a resolved schema object, never caller text.
 */
import type { Column, ComputedRelation, DbFunction, ForeignKey, FunctionArg, Relation, Table } from '../schema/schema-types';

/**
 * The operators of the default REST grammar's filters (`col=op.value`, docs/querying.md "Filters"):
 * a spelling, not a vocabulary of its own. The rest door parses each into a `Condition` (below):
 * `ne` is `neq`, `is_null` is `is`, `contains` the `contains` condition.
 */
export type FilterOp = 'eq' | 'ne' | 'gt' | 'gte' | 'lt' | 'lte' | 'in' | 'like' | 'ilike' | 'is_null' | 'contains';

export const filterOps: readonly FilterOp[] = ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'in', 'like', 'ilike', 'is_null', 'contains'];

export interface Search {
  /** Raw web-style query text for `websearch_to_tsquery`. */
  readonly query: string;
  readonly columns: readonly Column[];
  /** True when the caller named the columns (`search_columns`); else every text column. */
  readonly explicitColumns: boolean;
}

/** A decoded, verified cursor: the text values of the sort keys then the tie-breaker keys of the last row. */
export interface CursorPosition {
  readonly values: readonly (string | null)[];
}

/** A primary-key column and the caller's text value for it. */
export interface KeyValue {
  readonly column: Column;
  readonly value: string;
}

/**
 * Something a policy may restrict to some rows: `rowFilters` are conditions the policy adds (the
 * legacy policy's `filter`), ANDed to the caller's own. They are kept apart from `filters` so that
 * the query pattern stays the shape of the request. Absent: none.
 */
export interface RowScoped {
  readonly rowFilters?: readonly Condition[];
}

/** `GET /{parent}/:id/{child}`: the list is restricted to the children of one parent row. */
export interface ParentScope extends RowScoped {
  readonly table: Table;
  /** The child segment as the caller wrote it (a table or relation name), for the query pattern. */
  readonly childName: string;
  readonly key: readonly KeyValue[];
  /** The child table's FK that points at the parent. */
  readonly foreignKey: ForeignKey;
}

/** How an export is written: the list's JSON envelope, one JSON row per line, or RFC 4180 CSV. */
export type ExportFormat = 'json' | 'ndjson' | 'csv';

/** One aggregate over a read's rows: `count` of the rows, or `fn` of one column. */
export interface Aggregate {
  readonly fn: AggregateFn;
  /** Null only for `count`. */
  readonly column: Column | null;
}

/** A read answered with its aggregate (what `GET /{table}/aggregate` parses into). */
export type AggregateList = ReadCommand & { readonly aggregate: Aggregate };

/** A read that addresses one row by its key (what `GET /{table}/:id` parses into). */
export type GetCommand = ReadCommand & { readonly key: readonly KeyValue[] };

export type AggregateFn = 'count' | 'sum' | 'avg' | 'min' | 'max';


/** Upsert: `X-Upsert` / `X-On-Conflict`, or `Prefer: resolution=...`. */
export interface OnConflict {
  /** Columns of a primary key or unique constraint. */
  readonly columns: readonly Column[];
  /** `update` the provided non-conflict columns, or `ignore` the row. */
  readonly action: 'update' | 'ignore';
}

/**
 * One row of a write body: each key (a column name) -> the JSON text of its value exactly as
 * received, so numbers stay unrounded (JSON.parse would round integers above 2^53). Later stages
 * (the policy's row conditions) read the body from here, never from the request.
 */
export type BodyRow = Readonly<Record<string, string>>;

/** `POST /{table}`: one row (object body) or a batch (array body), inserted in one statement. */
export interface InsertCommand {
  readonly kind: 'insert';
  readonly table: Table;
  /** Every column named by any row of the body (checked against the schema). */
  readonly columns: readonly Column[];
  /** The request body as received: JSON text, bound as one parameter (numbers stay exact). */
  readonly body: string;
  /** The body's rows (one for an object body), key -> value text. */
  readonly rows: readonly BodyRow[];
  readonly batch: boolean;
  readonly rowCount: number;
  readonly returning: readonly Column[];
  readonly explicitReturning: boolean;
  readonly onConflict: OnConflict | null;
  /** How the write answers when it is read back (below); absent: `returning` answers. */
  readonly answer?: WriteAnswer;
  /** A key missing from a batch row takes the column default (`Prefer: missing=default`); absent: NULL. */
  readonly missingDefault?: boolean;
}

/**
 * Answer options of a write that is read back: the written rows are read through `node` (a read
 * level whose table is the written one: its select and embeds, as a `read` command's levels), in
 * one exposed schema, with the checks and the dry run below (docs/architecture.md, "One Command
 * vocabulary"). A general capability of insert, update and delete: any door may ask for it.
 */
export interface WriteAnswer {
  readonly schema: string;
  /** `minimal` and `headers-only` send no body (`Prefer: return=`). */
  readonly returnMode: 'minimal' | 'headers-only' | 'representation';
  /** The representation: the written rows, as `select` shapes them (the primary key alone for headers-only). */
  readonly node: ReadNode;
  readonly media: 'json' | 'object' | 'csv';
  /** More rows written fails the request, rolled back (`Prefer: handling=strict, max-affected=n`). */
  readonly maxAffected: number | null;
  /** A dry run: the transaction is rolled back after the response is built (`Prefer: tx=rollback`). */
  readonly rollback: boolean;
  /** The request method (PUT is an upsert of one row). */
  readonly method: 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  /** The options applied, as the caller spelled them, for the responder to confirm. */
  readonly applied: readonly string[];
  /** The caller gave `select` (the allow-list pattern names it). */
  readonly explicitSelect: boolean;
  /** The answer carries the number of rows written (`Prefer: count=...`). */
  readonly count: boolean;
  /**
   * Answered with the plan of the write's statement instead (EXPLAIN; with `analyze` the write
   * runs, as any write does): the plan capability of reads, for writes.
   */
  readonly plan?: PlanOptions;
}

/** `PATCH /{table}/:id` with the columns to change; or the rows matching `where`. */
export interface UpdateCommand extends RowScoped {
  readonly kind: 'update';
  readonly table: Table;
  /** Empty when `where` selects the rows. */
  readonly key: readonly KeyValue[];
  /** The rows to change are those matching these conditions (ANDed, each a boolean tree), not a key. */
  readonly where?: readonly Condition[];
  readonly answer?: WriteAnswer;
  readonly columns: readonly Column[];
  /** The JSON object body as received, bound as one parameter. */
  readonly body: string;
  /** The same object, key -> value text. */
  readonly row: BodyRow;
  readonly returning: readonly Column[];
  readonly explicitReturning: boolean;
  /**
   * Set on a bulk update (docs/writing.md, "Bulk updates"): several rows by key, each with its own
   * columns and values, in ONE statement. Made only from single updates of the same table that
   * each passed parse, policy and allow-list (lib/command/combine-updates.ts); `columns` is then
   * every column any row sets, and `key`, `body` and `row` are unused. The statement answers one
   * row per row it wrote, with that row's index here (the `written` shape's `row`).
   */
  readonly rows?: readonly KeyedChange[];
}

/** One row of a bulk update: its key, the columns it sets and its JSON object body as received. */
export interface KeyedChange {
  readonly key: readonly KeyValue[];
  readonly columns: readonly Column[];
  readonly body: string;
}

/** `DELETE /{table}/:id`; or the rows matching `where`. */
export interface DeleteCommand extends RowScoped {
  readonly kind: 'delete';
  readonly table: Table;
  /** Empty when `where` selects the rows. */
  readonly key: readonly KeyValue[];
  readonly where?: readonly Condition[];
  readonly answer?: WriteAnswer;
  readonly returning: readonly Column[];
  readonly explicitReturning: boolean;
}

/** One argument of a call: the function's argument and the key of its value in `RpcCommand.args`. */
export interface RpcArgument {
  readonly arg: FunctionArg;
  readonly key: string;
}

/** `POST /rpc/{function}`: one overload of one discovered function, and the values to call it with. */
export interface RpcCommand {
  readonly kind: 'rpc';
  readonly fn: DbFunction;
  /** `named` (object body: `name => value`) or `positional` (array, scalar or empty body). */
  readonly notation: 'named' | 'positional';
  /** The arguments passed, in call order; arguments left to their defaults are absent. */
  readonly args: readonly RpcArgument[];
  /**
   * A JSON object, key -> value, bound as one parameter: the object body as received, or, for a
   * positional call, the received element texts under keys "1", "2", ... (numbers stay exact).
   */
  readonly values: string;
  /** `x-gw-result-format`: `binary` asks PostgreSQL for binary result columns. */
  readonly resultFormat: 'text' | 'binary';
  /** How the call answers when its rows are read like a table's, or its options are given (below). */
  readonly answer?: CallAnswer;
}

/**
 * Answer options of a call: in one exposed schema, read-only or not, a dry run or not; a result
 * read through `read` (select, filters, order, limit and embeds on it, as on a table), or sent as
 * its JSON value, or as it is (`raw`).
 */
export interface CallAnswer {
  readonly schema: string;
  /** GET (and HEAD): the call runs in a read-only transaction (a VOLATILE function then fails with 25006, 405). */
  readonly readOnly: boolean;
  /**
   * The read over the function's result: its rows, or for scalars rows of one column
   * `pgrst_scalar` (a set of them always; one value only when the request reads it). Null: the
   * result is sent as its JSON value (or as it is, `raw`).
   */
  readonly read: ReadCommand | null;
  readonly rollback: boolean;
  /** The options applied, as the caller spelled them, for the responder to confirm. */
  readonly applied: readonly string[];
  /** HEAD: the same answer without a body. */
  readonly head: boolean;
  /** A count was asked for (`Prefer: count=...`): a call answering one value reports a total of 1. */
  readonly counted?: boolean;
  /** More rows in the result fails the call, rolled back (`Prefer: handling=strict, max-affected=n`); absent: no limit. */
  readonly maxAffected?: number;
  /** Answered with the plan of the call's statement instead (EXPLAIN; with `analyze` the function runs). */
  readonly plan?: PlanOptions;
  /**
   * Answered with the function's value itself, not its JSON: it returns a domain named like a
   * media type (`"application/octet-stream"` over bytea, `"text/plain"` over text, ...) and Accept
   * asked for that media type first (docs/postgrest-dialect.md, "Functions").
   */
  readonly raw?: RawMedia;
}

/** A call's value sent as it is, with the media type its return type is named after. */
export interface RawMedia {
  /** The media type, lower case (the domain's name). */
  readonly type: string;
  /** The value is bytea (sent as its bytes), else text (sent as its UTF-8 text). */
  readonly bytes: boolean;
}

/** `GET /_rpc/contracts`: the callable functions, rendered from the schema cache. */
export interface ContractsCommand {
  readonly kind: 'contracts';
  readonly functions: readonly DbFunction[];
}

export type Command = ReadCommand | InsertCommand | UpdateCommand | DeleteCommand | RpcCommand | ContractsCommand;


/*
 * The `read` command: a read shaped as a tree of table levels (docs/architecture.md, "One Command
 * vocabulary"). Each level selects fields (with output keys, casts, JSON paths and
 * aggregates), embeds related levels (to-one, to-many, many-to-many through a junction table,
 * inner or left, spread), filters with a boolean tree, orders and pages. Made by a door's
 * parse stage, every table and column a schema-cache object. Never holds caller text that
 * compile writes into SQL as text: output keys, JSON path keys and filter values are bound
 * parameters; casts are names from the fixed list `castTypes`; operators are closed unions.
 */

/** One step of a JSON path: `->key` (json) or `->>key` (text); `index` when the key is an integer (`->0`). */
export interface JsonStep {
  readonly key: string;
  readonly index: boolean;
  readonly asText: boolean;
}

/** A column, or a value inside a json/jsonb column reached by a path. */
export interface FieldRef {
  readonly column: Column;
  readonly path: readonly JsonStep[];
}

/**
 * Types a caller may cast to (`col::text`): PostgreSQL built-in type names, written into SQL from
 * this list only, never from the request (docs/postgrest-dialect.md, "Casts").
 */
export const castTypes = [
  'text', 'varchar', 'char', 'integer', 'int', 'int2', 'int4', 'int8', 'smallint', 'bigint', 'numeric', 'decimal', 'real', 'float4', 'float8',
  'double precision', 'boolean', 'bool', 'json', 'jsonb', 'date', 'time', 'timestamp', 'timestamptz', 'interval', 'uuid', 'money', 'bytea',
  'text[]', 'integer[]', 'bigint[]', 'numeric[]', 'boolean[]', 'uuid[]', 'date[]',
] as const;
export type CastType = (typeof castTypes)[number];

/** A selected field: `alias:column->path::cast.aggregate()::cast`. */
export interface FieldItem {
  readonly kind: 'field';
  /** The key of the value in the row's JSON object (bound as a value, never an identifier). */
  readonly key: string;
  readonly field: FieldRef;
  /** Cast of the value before any aggregate (`col::text`). */
  readonly cast: CastType | null;
  readonly aggregate: AggregateFn | null;
  /** Cast of the aggregate's result (`col.sum()::int`). */
  readonly resultCast: CastType | null;
  /** Made by expanding `*`: a policy may drop it instead of refusing the request. */
  readonly fromStar?: boolean;
}

/** `count()`: the number of rows of the group. */
export interface CountItem {
  readonly kind: 'count';
  readonly key: string;
  readonly resultCast: CastType | null;
}

/** An embedded resource in `select`. */
export interface EmbedItem {
  readonly kind: 'embed';
  readonly embed: Embed;
}

export type SelectItem = FieldItem | CountItem | EmbedItem;

/** A many-to-many link: `junction` holds `toSource` (FK to the level above) and `toTarget` (FK to the embedded table). */
export interface Junction {
  readonly table: Table;
  readonly toSource: ForeignKey;
  readonly toTarget: ForeignKey;
  /** Row conditions a policy adds to the junction table's rows (see RowScoped). */
  readonly rowFilters?: readonly Condition[];
}

/**
 * How an embedded level hangs on the level above it: one foreign key, a junction table, or a
 * function called with the parent row whose rows are the level's (a computed relationship).
 */
export type EmbedLink =
  | { readonly kind: 'fk'; readonly relation: Relation }
  | { readonly kind: 'junction'; readonly junction: Junction }
  | { readonly kind: 'computed'; readonly relation: ComputedRelation };

export interface Embed {
  /** The key of the embedded value in the parent row (the alias, else the name the caller wrote). */
  readonly key: string;
  /** The target as the caller wrote it, with its hint (`books!author_id`), for the query pattern. */
  readonly spelled: string;
  readonly link: EmbedLink;
  readonly cardinality: 'one' | 'many';
  /** `!inner`: parent rows without a related row are left out. */
  readonly inner: boolean;
  /** `...rel(cols)`: the related fields are merged into the parent row. */
  readonly spread: boolean;
  readonly node: ReadNode;
}

export type CompareOp = 'eq' | 'neq' | 'gt' | 'gte' | 'lt' | 'lte' | 'like' | 'ilike' | 'match' | 'imatch' | 'isdistinct' | 'cs' | 'cd' | 'ov' | 'sl' | 'sr' | 'nxr' | 'nxl' | 'adj';
/** Operators that take `(any)` / `(all)`. */
export type QuantifiableOp = 'eq' | 'neq' | 'gt' | 'gte' | 'lt' | 'lte' | 'like' | 'ilike' | 'match' | 'imatch';
export type FtsOp = 'fts' | 'plfts' | 'phfts' | 'wfts';
export type IsValue = 'null' | 'not_null' | 'true' | 'false' | 'unknown';

/**
 * A condition of a read's WHERE, whoever made it (a list's filters, a read level's `where`, a
 * policy's row conditions): a tree, `negate` for `not.`. Values stay text, bound and cast by compile.
 */
export type Condition =
  | { readonly kind: 'compare'; readonly field: FieldRef; readonly op: CompareOp; readonly value: string; readonly negate: boolean }
  | { readonly kind: 'quantified'; readonly field: FieldRef; readonly op: QuantifiableOp; readonly quantifier: 'any' | 'all'; readonly values: readonly string[]; readonly negate: boolean }
  | { readonly kind: 'in'; readonly field: FieldRef; readonly values: readonly string[]; readonly negate: boolean }
  | { readonly kind: 'is'; readonly field: FieldRef; readonly value: IsValue; readonly negate: boolean }
  /** The array column holds this one element (`@>` of a one-element array). */
  | { readonly kind: 'contains'; readonly field: FieldRef; readonly value: string; readonly negate: boolean }
  | { readonly kind: 'fts'; readonly field: FieldRef; readonly op: FtsOp; readonly config: string | null; readonly query: string; readonly negate: boolean }
  | { readonly kind: 'group'; readonly op: 'and' | 'or'; readonly items: readonly Condition[]; readonly negate: boolean }
  /** `rel=is.null` / `rel=not.is.null`: whether an embedded level (of this level) has a row. */
  | { readonly kind: 'embedded'; readonly embed: Embed; readonly exists: boolean };

/** One ordering term of any read: a field of the level, or of a to-one embedded level (`order=rel(col)`). */
export interface OrderTerm {
  readonly field: FieldRef;
  /** Set when the field is of a to-one embedded level. */
  readonly embed: Embed | null;
  /**
   * Set when the field is a column of a row reached through to-one relations (`sort=user.org.name`,
   * docs/querying.md, "Sort by a related column"): the steps from the level's table, in order, the
   * field a column of the last step's table. The value is that column of the one related row, or
   * NULL when there is none or the caller cannot see it (RLS, policy row conditions).
   */
  readonly related?: readonly RelatedStep[];
  readonly descending: boolean;
  /** Null: PostgreSQL's default (NULLS LAST ascending, NULLS FIRST descending). */
  readonly nulls: 'first' | 'last' | null;
}

/** One to-one hop of a related order term: the relation as the caller spelled it. */
export interface RelatedStep {
  readonly relation: Relation;
  /** The relation name the caller wrote (`user`, `users`), for the query pattern and the cursor. */
  readonly spelled: string;
  /** Row conditions a policy adds to the related table's rows (see RowScoped). */
  readonly rowFilters?: readonly Condition[];
}

/** One table level of the tree. */
export interface ReadNode {
  readonly table: Table;
  readonly items: readonly SelectItem[];
  /** False for `*` or no `select`: a policy may narrow such a projection instead of refusing it. */
  readonly explicitSelect: boolean;
  /** ANDed. */
  readonly where: readonly Condition[];
  readonly order: readonly OrderTerm[];
  /** Null: no limit on this level (embedded levels); the top level always has one. */
  readonly limit: number | null;
  readonly offset: number;
  /** Row conditions a policy adds (see RowScoped). */
  readonly rowFilters?: readonly Condition[];
}

export type CountMode = 'exact' | 'planned' | 'estimated';

/**
 * What the response body is. `plan`: EXPLAIN of the statement (docs/postgrest-dialect.md, "Plans").
 * `page`: the rows in a page object with the keyset cursor of the next page (`{data, next_cursor,
 * total?}`, docs/querying.md); the key, aggregate, export and plan capabilities below answer such a
 * read with one row, one value, a stream or the page statement's plan instead.
 */
export type ReadMedia = 'json' | 'object' | 'csv' | 'plan' | 'geojson' | 'page';

export interface PlanOptions {
  readonly analyze: boolean;
  readonly verbose: boolean;
  readonly settings: boolean;
  readonly buffers: boolean;
  readonly wal: boolean;
  readonly format: 'json' | 'text';
  /** The body the explained statement would build (a read's or a written rows' media); absent: a JSON array. */
  readonly for?: 'object' | 'csv';
  /** The options in the order the caller listed them, to be echoed; absent: none listed. */
  readonly listed?: readonly ('analyze' | 'verbose' | 'settings' | 'buffers' | 'wal')[];
}

export interface ReadCommand {
  readonly kind: 'read';
  /** The top level (its table is what `touchedColumns` and the error context name). */
  readonly table: Table;
  readonly root: ReadNode;
  /** The exposed schema the request selected (Accept-Profile / Content-Profile). */
  readonly schema: string;
  /** Count the rows the conditions select (`exact`: a page's `total`), or by estimate; null: no count. */
  readonly count: CountMode | null;
  readonly media: ReadMedia;
  /**
   * Set when the answer is the plan of exactly this statement (EXPLAIN, same text, same values)
   * instead of its rows: with the `plan` media, or with `page` (the default grammar's `_explain`).
   */
  readonly plan: PlanOptions | null;
  /** The caller gave a limit (`limit=` or `Range`), and an offset: named by the query pattern. */
  readonly explicitLimit: boolean;
  readonly explicitOffset: boolean;
  /** The request method was HEAD: no body, the same headers. */
  readonly head: boolean;
  /** `nulls=stripped` on the media type: keys whose value is null are left out of each row object. */
  readonly stripNulls?: boolean;
  /** The options applied, as the caller spelled them, for the responder to confirm (as a write's answer has them). */
  readonly applied?: readonly string[];

  // Capabilities of a read with the `page` media (docs/architecture.md, "One Command vocabulary"):
  // each absent unless set, and compile serves each (or refuses the read: never ignores one).
  /**
   * The last `tieBreakers` terms of `root.order` are the gateway's, not the caller's: the primary
   * key (or the distinct column) appended so that the order is total and a keyset cursor resumes
   * exactly. A policy does not check them as named columns; it sets `noCursor` instead.
   */
  readonly tieBreakers?: number;
  /** Keyset paging: the page starts after this position of `root.order`. */
  readonly cursor?: CursorPosition;
  /**
   * Set by a policy when a column of `root.order` may not be read: a cursor would carry its values
   * (signed, not encrypted), so no `next_cursor` is issued and `cursor` is refused.
   */
  readonly noCursor?: boolean;
  /** Web-style full-text search over text columns, ANDed to `root.where`. */
  readonly search?: Search;
  /** The rows are the distinct values of this column (the root selects it alone, ordered by it). */
  readonly distinct?: Column;
  /** Only the rows whose foreign key points at one parent row (`GET /{parent}/:id/{child}`). */
  readonly parent?: ParentScope;
  /**
   * The rows are streamed instead of returned as one page (docs/querying.md, "Exports"): the root's
   * `limit` is then the export's row cap.
   */
  readonly export?: ExportFormat;
  /**
   * The read addresses one row by its primary key (column = text value, in key order): the answer
   * is that row, or NOT_FOUND when none is visible. The root's page fields are their defaults.
   */
  readonly key?: readonly KeyValue[];
  /**
   * The answer is one aggregate over the rows `root.where` and `search` select, instead of the
   * rows; the root selects nothing and has no order or page.
   */
  readonly aggregate?: Aggregate;
}

export type CommandKind = Command['kind'];

/**
 * What a command is counted, traced, logged and rate-limited as (docs/observability.md): its kind;
 * for a read with the `page` media, `list`, or `get` when it addresses one row by its key,
 * `explain` when it is answered with its plan, `aggregate` when answered with an aggregate (the
 * default grammar's routes): the names users have always seen.
 */
export type OperationName = CommandKind | 'list' | 'get' | 'explain' | 'aggregate';

export function operationOf(command: Command): OperationName {
  if (command.kind !== 'read' || command.media !== 'page') return command.kind;
  if (command.key !== undefined) return 'get';
  return command.plan !== null ? 'explain' : command.aggregate !== undefined ? 'aggregate' : 'list';
}

export function assertNever(value: never, what = 'value'): never {
  throw new Error(`unhandled ${what}: ${JSON.stringify(value)}`);
}
