/**
 * `createClient<Database>(baseUrl, options)`: the typed fetch client (docs/client.md). In: the URL
 * where the gateway's data routes are mounted (`https://host/api`) and the credentials. Out: a
 * TablegateClient whose table, column, value and function names the compiler checks against the
 * Database type. Never: imports server code (express, pg, lib/ outside lib/client), so a
 * front-end bundle carries only this folder.
 */
import type { TablegateClient } from './client-types';
import type { AnyDatabase, GenericDatabase } from './database-types';
import { sendRequest, type ClientOptions, type FetchLike, type Transport } from './send-request';
import { TableClientImpl } from './table-client';

export function createClient<D extends GenericDatabase = AnyDatabase>(baseUrl: string, options: ClientOptions = {}): TablegateClient<D> {
  if (typeof baseUrl !== 'string' || !/^https?:\/\//i.test(baseUrl)) {
    throw new TypeError(`createClient needs the absolute http(s) URL where the gateway is mounted (e.g. https://example.com/api), not ${JSON.stringify(baseUrl)}.`);
  }
  const globalFetch = (globalThis as { fetch?: FetchLike }).fetch;
  const fetch = options.fetch ?? (globalFetch === undefined ? undefined : (globalFetch.bind(globalThis) as FetchLike));
  if (fetch === undefined) throw new TypeError('createClient found no global fetch: pass options.fetch.');
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(options.headers ?? {})) headers[name.toLowerCase()] = value;
  const transport: Transport = Object.freeze({ baseUrl: baseUrl.replace(/\/+$/, ''), fetch, token: options.token, headers: Object.freeze(headers) });
  const client = {
    from: (table: string) => new TableClientImpl(transport, table),
    batch: (operations: unknown) => sendRequest(transport, { method: 'POST', path: '/_batch', body: JSON.stringify(operations) }),
    rpc: (name: string, args?: unknown) =>
      sendRequest(transport, { method: 'POST', path: `/rpc/${encodeURIComponent(name)}`, ...(args === undefined ? {} : { body: JSON.stringify(args) }) }),
  };
  return client as unknown as TablegateClient<D>;
}
