/**
 * The run-time side of ListQuery (client-types.ts): an immutable builder of one `GET /{table}`
 * request (docs/querying.md) that sends it when awaited. In: method calls. Out: the query
 * parameters, in key-style filter spelling (`col.op=value`, which also filters columns named like
 * reserved parameters), and the list envelope. Never: checks names (the compiler and the gateway
 * do), or sends anything before it is awaited.
 */
import type { ClientResult, ListBody } from './client-types';
import { encodeValue, inList, nameList, quoteName, sortEntry } from './encode-query';
import { sendRequest, type Transport } from './send-request';

export interface ListState {
  readonly path: string;
  readonly select?: readonly string[];
  readonly expand: readonly string[];
  readonly filters: readonly (readonly [string, string])[];
  readonly sort: readonly string[];
  readonly limit?: number;
  readonly offset?: number;
  readonly cursor?: string;
  readonly count?: 'exact';
  readonly distinct?: string;
  readonly search?: { readonly query: string; readonly columns?: readonly string[] };
}

type Row = Record<string, unknown>;

export class ListQueryImpl implements PromiseLike<ClientResult<ListBody<Row>>> {
  constructor(
    protected readonly transport: Transport,
    protected readonly state: ListState,
  ) {}

  protected with(change: Partial<ListState>): ListQueryImpl {
    return new ListQueryImpl(this.transport, { ...this.state, ...change });
  }

  private filter(column: string, op: string, value: string): ListQueryImpl {
    return this.with({ filters: [...this.state.filters, [`${column}.${op}`, value]] });
  }

  select(columns: readonly string[]): ListQueryImpl {
    return this.with({ select: [...columns] });
  }
  expand(relations: readonly string[]): ListQueryImpl {
    return this.with({ expand: [...this.state.expand, ...relations] });
  }
  eq(column: string, value: unknown): ListQueryImpl {
    return this.filter(column, 'eq', encodeValue(value));
  }
  ne(column: string, value: unknown): ListQueryImpl {
    return this.filter(column, 'ne', encodeValue(value));
  }
  gt(column: string, value: unknown): ListQueryImpl {
    return this.filter(column, 'gt', encodeValue(value));
  }
  gte(column: string, value: unknown): ListQueryImpl {
    return this.filter(column, 'gte', encodeValue(value));
  }
  lt(column: string, value: unknown): ListQueryImpl {
    return this.filter(column, 'lt', encodeValue(value));
  }
  lte(column: string, value: unknown): ListQueryImpl {
    return this.filter(column, 'lte', encodeValue(value));
  }
  in(column: string, values: readonly unknown[]): ListQueryImpl {
    return this.filter(column, 'in', inList(values));
  }
  like(column: string, pattern: string): ListQueryImpl {
    return this.filter(column, 'like', pattern);
  }
  ilike(column: string, pattern: string): ListQueryImpl {
    return this.filter(column, 'ilike', pattern);
  }
  isNull(column: string, isNull = true): ListQueryImpl {
    return this.filter(column, 'is_null', String(isNull));
  }
  contains(column: string, element: unknown): ListQueryImpl {
    return this.filter(column, 'contains', encodeValue(element));
  }
  search(query: string, columns?: readonly string[]): ListQueryImpl {
    return this.with({ search: columns === undefined ? { query } : { query, columns: [...columns] } });
  }
  sort(column: string, direction: 'asc' | 'desc' = 'asc'): ListQueryImpl {
    return this.with({ sort: [...this.state.sort, sortEntry(column, direction)] });
  }
  limit(rows: number): ListQueryImpl {
    return this.with({ limit: wholeNumber(rows, 'limit') });
  }
  offset(rows: number): ListQueryImpl {
    return this.with({ offset: wholeNumber(rows, 'offset') });
  }
  cursor(cursor: string): ListQueryImpl {
    return this.with({ cursor });
  }
  count(mode: 'exact'): ListQueryImpl {
    return this.with({ count: mode });
  }
  distinct(column: string): ListQueryImpl {
    return this.with({ distinct: column });
  }

  /** The query parameters, reserved ones first, then the filters in the order they were added. */
  parameters(): (readonly [string, string])[] {
    const s = this.state;
    const out: (readonly [string, string])[] = [];
    if (s.select !== undefined) out.push(['select', nameList(s.select)]);
    if (s.distinct !== undefined) out.push(['distinct', quoteName(s.distinct)]);
    if (s.expand.length > 0) out.push(['expand', s.expand.map(expandEntry).join(',')]);
    if (s.search !== undefined) {
      out.push(['search', s.search.query]);
      if (s.search.columns !== undefined) out.push(['search_columns', nameList(s.search.columns)]);
    }
    if (s.sort.length > 0) out.push(['sort', s.sort.join(',')]);
    if (s.limit !== undefined) out.push(['limit', String(s.limit)]);
    if (s.offset !== undefined) out.push(['offset', String(s.offset)]);
    if (s.cursor !== undefined) out.push(['cursor', s.cursor]);
    if (s.count !== undefined) out.push(['count', s.count]);
    return [...out, ...s.filters];
  }

  toPath(): string {
    const query = this.parameters();
    return this.state.path + (query.length === 0 ? '' : `?${query.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&')}`);
  }

  execute(): Promise<ClientResult<ListBody<Row>>> {
    return sendRequest(this.transport, { method: 'GET', path: this.state.path, query: this.parameters() });
  }

  then<A = ClientResult<ListBody<Row>>, B = never>(
    onFulfilled?: ((value: ClientResult<ListBody<Row>>) => A | PromiseLike<A>) | null,
    onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null,
  ): Promise<A | B> {
    return this.execute().then(onFulfilled, onRejected);
  }

  async *pages(): AsyncIterableIterator<ClientResult<ListBody<Row>>> {
    let query: ListQueryImpl = this;
    for (;;) {
      const page = await query.execute();
      yield page;
      if (page.error !== null || page.next_cursor === undefined) return;
      query = query.with({ cursor: page.next_cursor, offset: undefined });
    }
  }
}

/** `nested:rel` keeps its prefix outside the quotes; the relation name is quoted like a column. */
function expandEntry(name: string): string {
  return name.startsWith('nested:') ? `nested:${quoteName(name.slice('nested:'.length))}` : quoteName(name);
}

function wholeNumber(value: number, name: string): number {
  if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`${name} must be a non-negative integer, not ${value}.`);
  return value;
}
