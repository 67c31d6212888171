/**
 * The typed surface of the client (docs/client.md): results shaped like the gateway's response
 * envelopes (docs/querying.md, docs/writing.md, docs/rpc.md), the list query builder and the
 * per-table methods, all checked against a Database type. Types only; the run-time side is in
 * list-query.ts, table-client.ts and create-client.ts.
 */
import type { TablegateClientError } from './client-error';
import type {
  ArgsOf,
  ArrayColumnOf,
  ColumnOf,
  ElementOf,
  Expanded,
  ExpandName,
  FilterValue,
  FunctionName,
  InsertOf,
  KeyValue,
  NestedInsertOf,
  ReturnsOf,
  RowOf,
  RpcArgs,
  SortName,
  TableName,
  UpdateOf,
} from './database-types';

/** `GET /{table}`: a page of rows. */
export interface ListBody<R> {
  readonly data: R[];
  /** Rows in this page (not in the table: see `total`). */
  readonly count: number;
  /** The limit that was applied (a larger one is clamped to `max_limit`). */
  readonly limit: number;
  readonly offset: number;
  /** Present when the page is full: pass it to `cursor()` for the next page. */
  readonly next_cursor?: string;
  /** Present with `count('exact')`. */
  readonly total?: number;
}

/** One row: `GET /{table}/:id`, a single insert, an update, a delete with `returning`; also an rpc result. */
export interface RowBody<R> {
  readonly data: R;
}

/** A batch insert. */
export interface BatchBody<R> {
  readonly data: R[];
  readonly count: number;
}

/** A delete without `returning` (`204`). */
export interface EmptyBody {
  readonly data: null;
}

export type Success<B> = B & { readonly error: null; readonly status: number };

export interface Failure {
  readonly data: null;
  readonly error: TablegateClientError;
  /** HTTP status; 0 when no answer arrived. */
  readonly status: number;
}

/** What every call resolves to; it never rejects for an HTTP or network error. Check `error` first. */
export type ClientResult<B> = Success<B> | Failure;

type Simplify<T> = { [K in keyof T]: T[K] } & {};

/** The row a query returns: the selected columns plus the expanded relations. */
export type Selected<D, T, S extends string, E extends string> = Simplify<Pick<RowOf<D, T>, S & keyof RowOf<D, T>> & Expanded<D, T, E>>;

type Col<D, T> = ColumnOf<RowOf<D, T>>;

/**
 * A list request, `GET /{table}`. Immutable: each method returns a new query. Awaiting it sends
 * the request. S is the union of selected columns, E of expanded relation names.
 */
export interface ListQuery<D, T extends TableName<D>, S extends string = Col<D, T>, E extends string = never>
  extends PromiseLike<ClientResult<ListBody<Selected<D, T, S, E>>>> {
  /** `select=`: only these columns, in this order. */
  select<const C extends readonly Col<D, T>[]>(columns: C): ListQuery<D, T, C[number], E>;
  /** `expand=`: a to-one relation as an object (or null), `nested:<rel>` as an array. */
  expand<const N extends readonly ExpandName<D, T>[]>(relations: N): ListQuery<D, T, S, E | N[number]>;

  eq<K extends Col<D, T>>(column: K, value: FilterValue<RowOf<D, T>[K]>): ListQuery<D, T, S, E>;
  ne<K extends Col<D, T>>(column: K, value: FilterValue<RowOf<D, T>[K]>): ListQuery<D, T, S, E>;
  gt<K extends Col<D, T>>(column: K, value: FilterValue<RowOf<D, T>[K]>): ListQuery<D, T, S, E>;
  gte<K extends Col<D, T>>(column: K, value: FilterValue<RowOf<D, T>[K]>): ListQuery<D, T, S, E>;
  lt<K extends Col<D, T>>(column: K, value: FilterValue<RowOf<D, T>[K]>): ListQuery<D, T, S, E>;
  lte<K extends Col<D, T>>(column: K, value: FilterValue<RowOf<D, T>[K]>): ListQuery<D, T, S, E>;
  in<K extends Col<D, T>>(column: K, values: readonly FilterValue<RowOf<D, T>[K]>[]): ListQuery<D, T, S, E>;
  /** `*` is the wildcard; `%`, `_` and `\` are literal. */
  like(column: Col<D, T>, pattern: string): ListQuery<D, T, S, E>;
  ilike(column: Col<D, T>, pattern: string): ListQuery<D, T, S, E>;
  /** `is_null`: IS NULL, or IS NOT NULL with `false`. */
  isNull(column: Col<D, T>, isNull?: boolean): ListQuery<D, T, S, E>;
  /** The array column holds this element. */
  contains<K extends ArrayColumnOf<RowOf<D, T>>>(column: K, element: ElementOf<RowOf<D, T>[K]>): ListQuery<D, T, S, E>;
  /** Full-text `search` (web-style query), over every text column or the ones named. */
  search(query: string, columns?: readonly Col<D, T>[]): ListQuery<D, T, S, E>;

  /** Adds a `sort` entry; entries apply in the order added. A column of a to-one related row is `'user.name'`. */
  sort(column: SortName<D, T>, direction?: 'asc' | 'desc'): ListQuery<D, T, S, E>;
  limit(rows: number): ListQuery<D, T, S, E>;
  offset(rows: number): ListQuery<D, T, S, E>;
  /** The `next_cursor` of the previous page (same `sort`); not with `offset`. */
  cursor(cursor: string): ListQuery<D, T, S, E>;
  /** `count=exact`: the body gets `total`. */
  count(mode: 'exact'): ListQuery<D, T, S, E>;
  /** `distinct=`: the distinct values of one column, as `{ column: value }` rows. */
  distinct<K extends Col<D, T>>(column: K): ListQuery<D, T, K, never>;

  /** Every page, following `next_cursor`; stops after an error or the last page. */
  pages(): AsyncIterableIterator<ClientResult<ListBody<Selected<D, T, S, E>>>>;
  /** The path and query string this query sends, below the base URL (`/orders?select=id`). */
  toPath(): string;
}

/** Options of `get`. */
export interface GetOptions<C, N> {
  readonly select?: C;
  readonly expand?: N;
}

/** Options of the writes: `returning=` narrows the returned rows. */
export interface ReturningOptions<C> {
  readonly returning?: C;
}

export interface UpsertOptions<C, K> extends ReturningOptions<C> {
  /** `X-On-Conflict`: the columns of a primary key or unique constraint; default the primary key. */
  readonly onConflict?: K;
}

type BatchOf<I> = [I] extends [never] ? never : readonly I[];

/** `client.from(table)`: a list query over the table, plus the single-row and write routes. */
export interface TableClient<D, T extends TableName<D>> extends ListQuery<D, T> {
  /** `GET /{table}/:id`; `NOT_FOUND` when no visible row has the key. */
  get<const C extends readonly Col<D, T>[] = readonly Col<D, T>[], const N extends readonly ExpandName<D, T>[] = readonly never[]>(
    key: KeyValue,
    options?: GetOptions<C, N>,
  ): Promise<ClientResult<RowBody<Selected<D, T, C[number], N[number]>>>>;

  /** `POST /{table}` with an array: one atomic batch. */
  insert<const C extends readonly Col<D, T>[] = readonly Col<D, T>[]>(
    rows: BatchOf<InsertOf<D, T>>,
    options?: ReturningOptions<C>,
  ): Promise<ClientResult<BatchBody<Selected<D, T, C[number], never>>>>;
  /** `POST /{table}` with one object; with related rows under relation names, a nested insert (one transaction, the tree answered). */
  insert<const C extends readonly Col<D, T>[] = readonly Col<D, T>[]>(
    row: NestedInsertOf<D, T>,
    options?: ReturningOptions<C>,
  ): Promise<ClientResult<RowBody<Selected<D, T, C[number], never>>>>;

  /** `POST /{table}` with `X-Upsert: true`: a conflicting row gets the given columns. */
  upsert<const C extends readonly Col<D, T>[] = readonly Col<D, T>[]>(
    rows: BatchOf<InsertOf<D, T>>,
    options?: UpsertOptions<C, readonly Col<D, T>[]>,
  ): Promise<ClientResult<BatchBody<Selected<D, T, C[number], never>>>>;
  upsert<const C extends readonly Col<D, T>[] = readonly Col<D, T>[]>(
    row: InsertOf<D, T>,
    options?: UpsertOptions<C, readonly Col<D, T>[]>,
  ): Promise<ClientResult<RowBody<Selected<D, T, C[number], never>>>>;

  /** `PATCH /{table}/:id` with the columns to change. */
  update<const C extends readonly Col<D, T>[] = readonly Col<D, T>[]>(
    key: KeyValue,
    patch: UpdateOf<D, T>,
    options?: ReturningOptions<C>,
  ): Promise<ClientResult<RowBody<Selected<D, T, C[number], never>>>>;

  /**
   * `GET /{table}/_changes` (docs/change-feed.md): inserts, updates and deletes of the rows this
   * caller may see, over `fetch` streaming with the token; resumes with `Last-Event-ID` by itself.
   */
  subscribe(options: SubscribeOptions, onEvent: (event: ChangeEvent<RowOf<D, T>>) => void): Subscription;

  /**
   * `PATCH /{table}` with an array (docs/writing.md, "Bulk updates"): each row carries its primary
   * key and its own values; one transaction. `missing: 'ignore'` skips rows no visible row matches
   * (listed in `missing`); by default they fail the whole update with `NOT_FOUND`.
   */
  updateMany<const C extends readonly Col<D, T>[] = readonly Col<D, T>[]>(
    rows: readonly (UpdateOf<D, T> & Partial<RowOf<D, T>>)[],
    options?: ReturningOptions<C> & { readonly missing?: 'ignore' | 'error' },
  ): Promise<ClientResult<BatchBody<Selected<D, T, C[number], never>> & { readonly missing?: number[] }>>;

  /** `DELETE /{table}/:id`: `204`, no row. */
  delete(key: KeyValue): Promise<ClientResult<EmptyBody>>;
  /** `DELETE /{table}/:id?returning=`: the deleted row's named columns. */
  delete<const C extends readonly Col<D, T>[]>(key: KeyValue, options: { readonly returning: C }): Promise<ClientResult<RowBody<Selected<D, T, C[number], never>>>>;
}

/**
 * One operation of `client.batch` (docs/writing.md, "Batches"): a single request below the mount.
 * A value `{ $ref: '0.id' }` in a body row or the query stands for a value an earlier operation returned.
 */
export interface BatchOperation {
  readonly method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  readonly path: string;
  readonly query?: Readonly<Record<string, string | readonly string[] | BatchReference>>;
  readonly body?: unknown;
  readonly headers?: { readonly Prefer?: string };
}

export interface BatchReference {
  readonly $ref: `${number}.${string}`;
}

/** Each operation's status and body, in order. */
export interface BatchAnswer {
  readonly data: { readonly status: number; readonly body: unknown }[];
}

export interface TablegateClient<D> {
  from<T extends TableName<D>>(table: T): TableClient<D, T>;
  /** `POST /_batch`: the operations in order in one transaction, all or nothing (`details.operation` names a failure). */
  batch(operations: readonly BatchOperation[]): Promise<ClientResult<BatchAnswer>>;
  /** `POST /rpc/{function}` with named arguments. */
  rpc<F extends FunctionName<D>>(name: F, ...args: RpcArgs<ArgsOf<D, F>>): Promise<ClientResult<RowBody<ReturnsOf<D, F>>>>;
}

/** The change feed (docs/change-feed.md): what `subscribe` hands to its callback. */
export type ChangeEvent<R = Record<string, unknown>> =
  | { readonly op: 'insert' | 'update'; readonly table: string; readonly row: R; readonly id: string }
  | { readonly op: 'delete'; readonly table: string; readonly key: Record<string, unknown>; readonly id: string }
  /** The changes since the last event are no longer kept: read the list again. */
  | { readonly op: 'reload'; readonly table: string; readonly id: undefined };

export interface SubscribeOptions {
  /** Filters as query parameters: `{ status: 'eq.open', 'amount.gte': '50' }` (docs/querying.md). */
  readonly filters?: Readonly<Record<string, string>>;
  readonly select?: readonly string[];
  /** Called when the subscription ends for good (a refusal), or with each failed attempt. */
  readonly onError?: (error: TablegateClientError, final: boolean) => void;
}

export interface Subscription {
  /** Stops reading and closes the stream. */
  close(): void;
  /** The id of the last event received: where a new subscription would resume. */
  readonly lastEventId: string | undefined;
}

