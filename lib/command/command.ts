/**
 * The typed command that `parse` produces and every later stage consumes. Kind-tagged so
 * stages `switch (command.kind)` exhaustively: adding a kind fails the build until every stage
 * handles it. Every name in here is a resolved schema object, never caller text.
 */
import type { Column, DbFunction, ForeignKey, FunctionArg, Table } from '../schema/schema-types';

export type FilterOp = 'eq' | 'ne' | 'gt' | 'gte' | 'lt' | 'lte' | 'in' | 'like' | 'ilike' | 'is_null' | 'contains';

export const filterOps: readonly FilterOp[] = ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'in', 'like', 'ilike', 'is_null', 'contains'];

/** One condition on one column. Values stay text; PostgreSQL converts them with the column's input function. */
export type Filter =
  | { readonly column: Column; readonly op: 'eq' | 'ne' | 'gt' | 'gte' | 'lt' | 'lte' | 'like' | 'ilike' | 'contains'; readonly value: string }
  | { readonly column: Column; readonly op: 'in'; readonly value: readonly string[] }
  | { readonly column: Column; readonly op: 'is_null'; readonly value: boolean };

export interface SortKey {
  readonly column: Column;
  readonly descending: boolean;
}

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
 * A foreign-key relation seen from one table (named as in docs/relations.md). `forward`: this table holds the
 * FK columns (many-to-one / one-to-one); `reverse`: the target holds them (one-to-many, or
 * one-to-one when the FK columns are unique there).
 */
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

/** One `expand` entry: the related rows of `relation.target`, with the columns to return. */
/**
 * Something a policy may restrict to some rows: `rowFilters` are conditions the policy adds (the
 * legacy policy's `filter`), ANDed to the caller's own. They are kept apart from `filters` so that
 * the query pattern stays the shape of the request. Absent: none.
 */
export interface RowScoped {
  readonly rowFilters?: readonly Filter[];
}

export interface Expansion extends RowScoped {
  readonly relation: Relation;
  readonly select: readonly Column[];
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

export interface ListCommand extends RowScoped {
  readonly kind: 'list';
  readonly table: Table;
  /** Columns returned, in order. */
  readonly select: readonly Column[];
  /** True when the caller named the columns with `select`. */
  readonly explicitSelect: boolean;
  readonly filters: readonly Filter[];
  readonly search: Search | null;
  /** Caller's sort keys, in order. */
  readonly sort: readonly SortKey[];
  /**
   * The full ordering: `sort` followed by the tie-breaker (primary key, or the distinct column)
   * keys not already sorted on. Empty when the table has neither.
   */
  readonly order: readonly SortKey[];
  readonly limit: number;
  /** True when the caller gave `limit` (the query pattern names it, whatever its value). */
  readonly explicitLimit: boolean;
  readonly offset: number;
  /** True when the caller gave `offset`. */
  readonly explicitOffset: boolean;
  readonly cursor: CursorPosition | null;
  readonly distinct: Column | null;
  readonly countExact: boolean;
  /**
   * Set by a policy when a column of `order` may not be read: a cursor would carry its values
   * (signed, not encrypted), so no `next_cursor` is issued and `cursor` is refused.
   */
  readonly noCursor?: boolean;
  /** Related rows to embed in each row (issue: relations). */
  readonly expand: readonly Expansion[];
  /** Set on the child route: only rows whose FK points at this parent row. */
  readonly parent: ParentScope | null;
  /**
   * Set when the rows are streamed instead of returned as one page (docs/querying.md, "Exports"):
   * `Accept: application/x-ndjson` or `text/csv`, or a JSON `limit` above max_limit while
   * max_export_rows allows it. `limit` is then the export's row cap. Absent: a page.
   */
  readonly export?: ExportFormat;
}

export interface GetCommand extends RowScoped {
  readonly kind: 'get';
  readonly table: Table;
  readonly select: readonly Column[];
  readonly explicitSelect: boolean;
  /** Primary-key column = text value, in key order. */
  readonly key: readonly KeyValue[];
  readonly expand: readonly Expansion[];
}

export type AggregateFn = 'count' | 'sum' | 'avg' | 'min' | 'max';

/** `GET /{table}/aggregate?fn=&column=&<filters>`. */
export interface AggregateCommand extends RowScoped {
  readonly kind: 'aggregate';
  readonly table: Table;
  readonly fn: AggregateFn;
  /** Null only for `count`. */
  readonly column: Column | null;
  readonly filters: readonly Filter[];
  readonly search: Search | null;
}

/** `GET /{table}/_explain?<list params>`: EXPLAIN ANALYZE of exactly the list statement. */
export interface ExplainCommand {
  readonly kind: 'explain';
  readonly table: Table;
  readonly list: ListCommand;
}

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
}

/** `PATCH /{table}/:id` with the columns to change. */
export interface UpdateCommand extends RowScoped {
  readonly kind: 'update';
  readonly table: Table;
  readonly key: readonly KeyValue[];
  readonly columns: readonly Column[];
  /** The JSON object body as received, bound as one parameter. */
  readonly body: string;
  /** The same object, key -> value text. */
  readonly row: BodyRow;
  readonly returning: readonly Column[];
  readonly explicitReturning: boolean;
}

/** `DELETE /{table}/:id`. */
export interface DeleteCommand extends RowScoped {
  readonly kind: 'delete';
  readonly table: Table;
  readonly key: readonly KeyValue[];
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
}

/** `GET /_rpc/contracts`: the callable functions, rendered from the schema cache. */
export interface ContractsCommand {
  readonly kind: 'contracts';
  readonly functions: readonly DbFunction[];
}

export type Command = ListCommand | GetCommand | AggregateCommand | ExplainCommand | InsertCommand | UpdateCommand | DeleteCommand | RpcCommand | ContractsCommand;

export type CommandKind = Command['kind'];

export function assertNever(value: never, what = 'value'): never {
  throw new Error(`unhandled ${what}: ${JSON.stringify(value)}`);
}
