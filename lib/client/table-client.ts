/**
 * The run-time side of TableClient (client-types.ts): `client.from(table)` is a list query over the
 * table plus `get` (`GET /{table}/:id`), `insert` / `upsert` (`POST /{table}`), `update` (`PATCH`), `updateMany` (`PATCH /{table}` with an array)
 * and `delete` (`DELETE /{table}/:id`), as docs/querying.md and docs/writing.md describe them.
 * In: keys, rows and options. Out: requests and the gateway's envelopes. Never: sends a body
 * that is not JSON, or changes the rows it is given.
 */
import type { ClientResult } from './client-types';
import { keySegment, nameList } from './encode-query';
import { ListQueryImpl } from './list-query';
import { sendRequest, type Transport } from './send-request';
import { subscribeChanges } from './subscribe-changes';
import type { ChangeEvent, SubscribeOptions, Subscription } from './client-types';

type Names = readonly string[];

export class TableClientImpl extends ListQueryImpl {
  constructor(
    transport: Transport,
    private readonly table: string,
  ) {
    super(transport, { path: `/${encodeURIComponent(table)}`, expand: [], filters: [], sort: [] });
  }

  private rowPath(key: unknown): string {
    return `/${encodeURIComponent(this.table)}/${keySegment(key)}`;
  }

  get(key: unknown, options: { select?: Names; expand?: Names } = {}): Promise<ClientResult<unknown>> {
    let query: ListQueryImpl = new ListQueryImpl(this.transport, { path: this.rowPath(key), expand: [], filters: [], sort: [] });
    if (options.select !== undefined) query = query.select(options.select);
    if (options.expand !== undefined) query = query.expand(options.expand);
    return sendRequest(this.transport, { method: 'GET', path: this.rowPath(key), query: query.parameters() });
  }

  insert(rows: unknown, options: { returning?: Names } = {}): Promise<ClientResult<unknown>> {
    return this.post(rows, options.returning, {});
  }

  upsert(rows: unknown, options: { returning?: Names; onConflict?: Names } = {}): Promise<ClientResult<unknown>> {
    const headers: Record<string, string> = { 'x-upsert': 'true' };
    if (options.onConflict !== undefined) headers['x-on-conflict'] = nameList(options.onConflict);
    return this.post(rows, options.returning, headers);
  }

  private post(rows: unknown, returning: Names | undefined, headers: Record<string, string>): Promise<ClientResult<unknown>> {
    return sendRequest(this.transport, { method: 'POST', path: this.state.path, query: returningQuery(returning), headers, body: JSON.stringify(rows) });
  }

  update(key: unknown, patch: unknown, options: { returning?: Names } = {}): Promise<ClientResult<unknown>> {
    return sendRequest(this.transport, { method: 'PATCH', path: this.rowPath(key), query: returningQuery(options.returning), body: JSON.stringify(patch) });
  }

  /** The table's change feed (docs/change-feed.md), resumed by itself after a dropped connection. */
  subscribe(options: SubscribeOptions, onEvent: (e: ChangeEvent) => void): Subscription {
    const query: (readonly [string, string])[] = Object.entries(options.filters ?? {});
    if (options.select !== undefined) query.push(['select', nameList(options.select)]);
    return subscribeChanges(this.transport, this.table, query, onEvent, options.onError);
  }

  updateMany(rows: unknown, options: { returning?: Names; missing?: 'ignore' | 'error' } = {}): Promise<ClientResult<unknown>> {
    const headers: Record<string, string> = options.missing === undefined ? {} : { prefer: `missing=${options.missing}` };
    return sendRequest(this.transport, { method: 'PATCH', path: this.state.path, query: returningQuery(options.returning), headers, body: JSON.stringify(rows) });
  }

  delete(key: unknown, options: { returning?: Names } = {}): Promise<ClientResult<unknown>> {
    return sendRequest(this.transport, { method: 'DELETE', path: this.rowPath(key), query: returningQuery(options.returning) });
  }
}

function returningQuery(returning: Names | undefined): (readonly [string, string])[] {
  return returning === undefined ? [] : [['returning', nameList(returning)]];
}
