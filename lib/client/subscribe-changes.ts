/**
 * `client.from(table).subscribe({ filters, select }, onEvent)`: the change feed
 * (docs/change-feed.md) read with `fetch` streaming, so the `Authorization` header goes with it (a
 * browser's EventSource cannot send one). Resumes by itself: after a dropped connection, an
 * `overflow`, a `shutdown` or an `expired` event (the token function is asked again), it reconnects
 * with `Last-Event-ID`, waiting 0.5 s doubling to 10 s (or `Retry-After`). A refusal (4xx other
 * than 429) ends the subscription with `onError`. In: the transport and the table. Out: change
 * events. Never: logs the token.
 */
import { TablegateClientError, type GatewayErrorBody } from './client-error';
import { queryString } from './encode-query';
import type { Transport } from './send-request';
import type { ChangeEvent, SubscribeOptions, Subscription } from './client-types';

/*
 * The web globals this file uses, described here: the client is compiled without the DOM's or
 * Node's types (scripts/build.js), and both browsers and Node 18+ have them.
 */
interface AbortSignalLike {
  readonly aborted: boolean;
}
interface AbortControllerLike {
  readonly signal: AbortSignalLike;
  abort(): void;
}
interface WebGlobals {
  readonly fetch: unknown;
  readonly AbortController: new () => AbortControllerLike;
  readonly TextDecoder: new () => { decode(input?: Uint8Array, options?: { stream?: boolean }): string };
  readonly setTimeout: (callback: () => void, ms: number) => unknown;
}
const web = globalThis as unknown as WebGlobals;

type StreamingFetch = (url: string, init: { headers: Record<string, string>; signal: AbortSignalLike }) => Promise<{
  readonly status: number;
  readonly headers: { get(name: string): string | null };
  readonly body: { getReader(): { read(): Promise<{ done: boolean; value?: Uint8Array }> } } | null;
  text(): Promise<string>;
}>;

export function subscribeChanges(transport: Transport, table: string, query: readonly (readonly [string, string])[], onEvent: (e: ChangeEvent) => void, onError?: SubscribeOptions['onError']): Subscription {
  const fetchStream = web.fetch as StreamingFetch;
  let lastEventId: string | undefined;
  let closed = false;
  let controller: AbortControllerLike | undefined;
  const url = `${transport.baseUrl}/${encodeURIComponent(table)}/_changes${queryString(query)}`;

  const once = async (): Promise<number | 'stop'> => {
    const headers: Record<string, string> = { ...transport.headers, accept: 'text/event-stream' };
    const token = typeof transport.token === 'function' ? await transport.token() : transport.token;
    if (token) headers.authorization = `Bearer ${token}`;
    if (lastEventId !== undefined) headers['last-event-id'] = lastEventId;
    controller = new web.AbortController();
    const res = await fetchStream(url, { headers, signal: controller.signal });
    if (res.status !== 200 || res.body === null) {
      const text = await res.text().catch(() => '');
      let body: Partial<GatewayErrorBody> = {};
      try {
        body = JSON.parse(text) as GatewayErrorBody;
      } catch {
        // not the gateway's error body
      }
      const requestId = res.headers.get('x-request-id') ?? undefined;
      const error = new TablegateClientError({
        code: (body.code ?? 'INTERNAL_ERROR') as TablegateClientError['code'],
        message: body.message ?? `HTTP ${res.status}`,
        status: res.status,
        ...(body.details === undefined ? {} : { details: body.details }),
        ...(body.hint === undefined ? {} : { hint: body.hint }),
        ...(requestId === undefined ? {} : { requestId }),
      });
      const retry = res.status === 429 || res.status >= 500;
      onError?.(error, !retry);
      if (!retry) return 'stop';
      return Number(res.headers.get('retry-after') ?? '1') * 1000;
    }
    const reader = res.body.getReader();
    const decoder = new web.TextDecoder();
    let buffer = '';
    let ev: { id?: string; event?: string; data: string[] } = { data: [] };
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return 0;
      buffer += decoder.decode(value, { stream: true });
      let nl: number;
      while ((nl = buffer.indexOf('\n')) >= 0) {
        const line = buffer.slice(0, nl).replace(/\r$/, '');
        buffer = buffer.slice(nl + 1);
        if (line === '') {
          if (ev.id !== undefined) lastEventId = ev.id;
          const data = ev.data.join('\n');
          if (ev.event === 'insert' || ev.event === 'update' || ev.event === 'delete') onEvent({ ...(JSON.parse(data) as object), id: ev.id } as ChangeEvent);
          else if (ev.event === 'reload') onEvent({ op: 'reload', table, id: undefined });
          else if (ev.event === 'expired' || ev.event === 'overflow' || ev.event === 'shutdown') {
            controller.abort();
            return 0;
          }
          ev = { data: [] };
        } else if (!line.startsWith(':')) {
          const colon = line.indexOf(':');
          const field = colon < 0 ? line : line.slice(0, colon);
          const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
          if (field === 'id') ev.id = value;
          else if (field === 'event') ev.event = value;
          else if (field === 'data') ev.data.push(value);
        }
      }
    }
  };

  void (async () => {
    let delay = 500;
    while (!closed) {
      let wait: number | 'stop';
      try {
        wait = await once();
        if (wait === 0) delay = 500;
      } catch {
        wait = delay;
        delay = Math.min(delay * 2, 10_000);
      }
      if (wait === 'stop' || closed) return;
      await new Promise<void>((r) => web.setTimeout(() => r(), Math.max(wait, 100)));
    }
  })();

  return {
    close() {
      closed = true;
      controller?.abort();
    },
    get lastEventId() {
      return lastEventId;
    },
  };
}
