/**
 * Plan: what `compile` hands to `execute` and to rendering. The SQL, how to run it, and the shape
 * of its result: which column of the result row holds what. Rendering reads positions only from
 * `shape`, so compile may reorder or add columns without any render file knowing how the
 * statement is built (docs/architecture.md, "The plan and its result shape").
 */
import type { ExportFormat } from '../command/command';
import type { CompiledQuery } from '../sql/sql';

/**
 * A list (and a child route): one row whose columns are the page's rows as a JSON array (`data`),
 * their count, the last row's ordering keys as a JSON array of texts (`lastKey`, for
 * next_cursor), and, when asked for, the total (`count=exact`) and whether the parent row of a
 * child route is visible (`'true'`).
 */
export interface ListShape {
  readonly kind: 'list';
  readonly data: number;
  readonly count: number;
  readonly lastKey: number;
  /** Null unless the command asked for `count=exact`. */
  readonly total: number | null;
  /** Null unless the command is a child route. */
  readonly parentVisible: number | null;
}

/** A single-row read: at most one row, whose `data` column is the row's JSON (no row: not found). */
export interface RowShape {
  readonly kind: 'row';
  readonly data: number;
}

/** An aggregate or an EXPLAIN: one row whose `value` column is JSON text. */
export interface ValueShape {
  readonly kind: 'value';
  readonly value: number;
}

/** Insert, update, delete: one row with the returned rows as JSON (`data`, null when none) and how many were written. */
export interface WrittenShape {
  readonly kind: 'written';
  readonly data: number;
  readonly count: number;
  /**
   * A bulk update (UpdateCommand `rows`): the statement answers one result row per row it wrote,
   * `data` and `count` being that row's JSON and 1, `row` its index among the command's rows, and
   * `duplicateKeys` 'true' when two of the rows address the same key (so one of them wrote nothing).
   */
  readonly row?: number;
  readonly duplicateKeys?: number;
}

/** A function call with text results: one row whose `value` column is the JSON of the result (null for void). */
export interface CallShape {
  readonly kind: 'call';
  readonly value: number;
}

/**
 * A function call with binary results: each row's first `columns` fields are the result's own
 * columns (one for a scalar or a single row's JSON), and `timeZone` holds the session TimeZone,
 * which timestamptz values are rendered in.
 */
export interface BinaryCallShape {
  readonly kind: 'binary-call';
  readonly columns: number;
  readonly timeZone: number;
}

/**
 * A `read` command, or a write or call read back like one: one row with the response body the statement built (a JSON
 * array, or CSV text), the number of rows in it, and the total (a count was asked for, else null).
 */
export interface ReadShape {
  readonly kind: 'read';
  readonly body: number;
  readonly count: number;
  readonly total: number;
  /** An upsert read back: how many of the written rows were inserted rather than updated. */
  readonly inserted?: number;
}

/** No statement: the answer comes from the schema cache (GET /_rpc/contracts). */
export interface NoResultShape {
  readonly kind: 'none';
}

/**
 * How an export column's text becomes its value in a row's JSON (compile-export.ts):
 *   raw          as it is: an integer, or JSON PostgreSQL built (json, jsonb, `to_json(col)`, an expansion)
 *   bool         `t`, `f` -> true, false
 *   number       as it is, but `NaN`, `Infinity`, `-Infinity` as JSON strings (float, numeric)
 *   string       a JSON string, escaped as PostgreSQL's to_json escapes it
 *   plainString  a JSON string whose text never needs escaping (uuid)
 */
export type JsonText = 'raw' | 'bool' | 'number' | 'string' | 'plainString';

/**
 * An export (docs/querying.md, "Exports"): any number of rows, read in batches and written as
 * they come. The row's columns, in order, named by `columns` (the CSV header line, the JSON keys).
 * `csv`: they are the CSV fields; `plain` says which of them never need quoting (their type's
 * text has no comma, quote or line break). `json`, `ndjson`: `json` says how each becomes its
 * JSON value, so that the row is byte for byte PostgreSQL's `to_json` of it.
 */
export interface StreamShape {
  readonly kind: 'stream';
  readonly format: ExportFormat;
  readonly columns: readonly string[];
  readonly plain: readonly boolean[];
  readonly json: readonly JsonText[];
}

export type ResultShape = ListShape | RowShape | ValueShape | WrittenShape | CallShape | BinaryCallShape | StreamShape | NoResultShape | ReadShape;

/**
 * Batch inserts: the same INSERT over a prefix of the rows, so that execute can name the row that
 * failed (lib/db/locate-failing-row.ts).
 */
export interface RowProbe {
  /** Rows in the batch. */
  readonly rows: number;
  /** The batch's INSERT restricted to its first `prefix` rows. */
  query(prefix: number): CompiledQuery;
}

export interface Plan {
  /** Null when the answer needs no database (GET /_rpc/contracts). */
  readonly query: CompiledQuery | null;
  /** Run in a READ ONLY transaction. */
  readonly readOnly: boolean;
  /** Which column of the result holds what; rendering reads nothing else about the statement. */
  readonly shape: ResultShape;
  /** Batch inserts: the same INSERT over a prefix of the rows, to name the row that failed. */
  readonly rowProbe?: RowProbe;
  /** Ask PostgreSQL for binary result columns (`x-gw-result-format: binary`). */
  readonly binaryResults?: boolean;
  /**
   * The one exposed schema the command runs in (a door may let the caller pick it): `search_path`
   * is it then `extra_search_path`. Unset: every exposed schema.
   */
  readonly schema?: string;
  /**
   * A count by estimate (a read's `count` of `planned` or `estimated`): EXPLAIN (FORMAT JSON) of the
   * rows the caller's statement counts, run in the same transaction just before it, as the caller
   * (docs/security.md, "Counts and estimates"). Execute puts the total it gives in the `read`
   * shape's `total` column: `planned` the planner's row estimate; `estimated` the exact count the
   * statement returns when it is at most `cap` (max_limit), else the larger of that and the
   * estimate (docs/postgrest-dialect.md, "Counts").
   */
  readonly estimate?: { readonly query: CompiledQuery; readonly mode: 'planned' | 'estimated'; readonly cap: number };
  /** A dry run: the transaction is rolled back after the statement. */
  readonly rollback?: boolean;
  /**
   * An export of a child route: a statement whose one row's one column is `'true'` when the
   * parent row is visible. Execute runs it before opening the cursor, so that a hidden parent is
   * a 404 as on the page route, not an empty export (docs/querying.md, "Exports").
   */
  readonly parentCheck?: CompiledQuery;
  /**
   * The database span's trace context, set only when tracing is on (docs/observability.md, "The
   * trace in PostgreSQL"): the transaction sets it as `tablegate.trace_id` and `application_name`,
   * never in the statement text.
   */
  readonly trace?: PlanTrace;
}

/** A W3C trace context as PostgreSQL sees it. */
export interface PlanTrace {
  /** 32 lower-case hex digits. */
  readonly traceId: string;
  /** `00-{trace id}-{span id}-{flags}` (W3C Trace Context), 55 characters: fits application_name's 63. */
  readonly traceparent: string;
}
