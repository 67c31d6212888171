/**
 * One WebSocket of the realtime endpoint (docs/postgrest-dialect.md, "Realtime"): the Phoenix
 * channel protocol of @supabase/realtime-js, for Postgres Changes only.
 *
 * - `phx_join` with `config.postgres_changes`: the token (`access_token`, else the `apikey` the
 *   socket was opened with) goes through the auth stage; each binding becomes one change feed
 *   subscription (its table and filter as a list request of the default grammar, so parse,
 *   policy and allow-list judge it as they judge the list). Any refusal answers the join with an
 *   error reply (realtime-js: CHANNEL_ERROR); otherwise, once every subscription is in its
 *   group, an ok reply with the bindings' ids and a `system` message.
 * - Broadcast, Presence and private channels are not served: such a join is refused.
 * - `access_token` renews the channel's token; one that fails auth, or names a caller who would
 *   see something else, closes the channel (`system` error, `phx_close`), as an expiry does.
 * - `heartbeat` on `phoenix` is answered; `phx_leave` ends the channel.
 * Never: sends an event the change feed did not check for the channel's identity.
 */
import type WebSocket from 'ws';
import type { ChangeSubscriber, FeedEvent, FeedSink, FeedSubscription } from '../../pipeline/change-subscription';
import type { Identity } from '../../pipeline/identity';
import type { GatewayRequest } from '../../pipeline/gateway-request';
import { GatewayError } from '../../errors/gateway-error';
import { changeData } from './change-data';
import { parseRealtimeFilter } from './parse-realtime-filter';
import { readMessage, writeMessage, type PhoenixMessage, type Vsn } from './phoenix-message';

export interface ConnectionParts {
  readonly feed: ChangeSubscriber;
  /** The auth stage on a request that carries `token` (undefined: none); rejects as it does. */
  authenticate(token: string | undefined, request: GatewayRequest): Promise<Identity>;
  /** The error to send, narrowed to the caller; a GatewayError or something to hide. */
  publicError(err: unknown, identity: Identity | undefined): Promise<unknown>;
  readonly log: (message: string) => void;
  /** Bytes the socket may hold unsent before the connection is dropped (a slow consumer). */
  readonly maxBufferedBytes: number;
}

interface Binding {
  readonly id: number;
  /** `*`, INSERT, UPDATE or DELETE, as the client sent it. */
  readonly event: string;
  readonly schema: string;
  readonly table: string;
  readonly filter: string | undefined;
  subscription?: FeedSubscription;
  ready: boolean;
}

interface Channel {
  readonly topic: string;
  readonly joinRef: string | null;
  readonly bindings: Binding[];
  identity: Identity | undefined;
  /** The ok reply was sent: events go out; before, they wait in `pending`. */
  joined: boolean;
  closed: boolean;
  pending: string[];
  expiry: NodeJS.Timeout | undefined;
  /** Sends the ok reply once every binding is in its group. */
  whenReady: (() => void) | undefined;
}

const servedEvents: ReadonlySet<string> = new Set(['*', 'INSERT', 'UPDATE', 'DELETE']);
const heartbeatTopic = 'phoenix';
let requests = 0;

export class RealtimeConnection {
  private readonly channels = new Map<string, Channel>();
  private nextId = 1;
  private closed = false;

  constructor(
    private readonly socket: WebSocket,
    private readonly vsn: Vsn,
    private readonly apikey: string | undefined,
    /** The peer's address: anonymous callers are counted by it. */
    private readonly address: string,
    private readonly parts: ConnectionParts,
  ) {
    socket.on('message', (data, isBinary) => {
      if (isBinary) return void socket.close(1003, 'binary frames are not served');
      const message = readMessage(data.toString('utf8'), vsn);
      if (message === undefined) return void socket.close(1003, 'not a Phoenix message');
      void this.receive(message).catch((err: unknown) => parts.log(`realtime: ${err instanceof Error ? err.message : String(err)}`));
    });
    socket.on('close', () => this.closeAll());
    socket.on('error', () => this.closeAll());
  }

  /** Ends the socket (the gateway closes); the client reconnects and joins again. */
  drop(code: number, reason: string): void {
    this.closeAll();
    this.socket.close(code, reason);
  }

  private async receive(m: PhoenixMessage): Promise<void> {
    if (m.topic === heartbeatTopic && m.event === 'heartbeat') return this.reply(m, 'ok', '{}');
    const channel = this.channels.get(m.topic);
    switch (m.event) {
      case 'phx_join':
        if (channel !== undefined) this.closeChannel(channel);
        return this.join(m);
      case 'phx_leave':
        if (channel !== undefined) this.closeChannel(channel);
        this.reply(m, 'ok', '{}');
        return this.send(m.joinRef, m.ref, m.topic, 'phx_close', '{}');
      case 'access_token':
        if (channel !== undefined && !channel.closed) await this.renew(channel, m.payload['access_token']);
        return;
      default:
        if (channel === undefined) return this.reply(m, 'error', '{"reason":"unmatched topic"}');
        return this.reply(m, 'error', JSON.stringify({ reason: `\`${m.event}\` is not served: this endpoint serves Postgres Changes only (no Broadcast, no Presence).`, code: 'PARSE_ERROR' }));
    }
  }

  private async join(m: PhoenixMessage): Promise<void> {
    const config = asObject(m.payload['config']);
    const channel: Channel = { topic: m.topic, joinRef: m.joinRef ?? m.ref, bindings: [], identity: undefined, joined: false, closed: false, pending: [], expiry: undefined, whenReady: undefined };
    this.channels.set(m.topic, channel);
    try {
      const wanted = Array.isArray(config['postgres_changes']) ? (config['postgres_changes'] as unknown[]) : [];
      if (asObject(config['presence'])['enabled'] === true) throw notServed('Presence is not served: this endpoint serves Postgres Changes only.');
      if (config['private'] === true) throw notServed('Private channels are not served: this endpoint serves Postgres Changes only, checked by row-level security.');
      if (wanted.length === 0) throw notServed('This endpoint serves Postgres Changes only: a channel without `postgres_changes` (Broadcast, Presence) is not served.');
      for (const w of wanted) channel.bindings.push(this.binding(asObject(w)));
      const token = typeof m.payload['access_token'] === 'string' ? m.payload['access_token'] : this.apikey;
      const identity = await this.parts.authenticate(token, request(channel.bindings[0]!.table, []));
      channel.identity = identity;
      try {
        for (const b of channel.bindings) {
          if (channel.closed) return;
          const query = b.filter === undefined || b.filter === '' ? [] : parseRealtimeFilter(b.filter);
          const caller = identity.source === 'anonymous' ? `ip\u0000${this.address}` : `${identity.tenantId}\u0000${identity.userId}`;
          b.subscription = await this.parts.feed.subscribe(identity, request(b.table, query), caller, this.sink(channel, b));
          // The socket closed, or the topic was joined again, while this subscription was being made.
          if (channel.closed) return void b.subscription.close();
          if (b.subscription.table.schema !== b.schema) {
            throw new GatewayError('NOT_FOUND', `There is no table \`${b.table}\` in schema \`${b.schema}\` (it is in \`${b.subscription.table.schema}\`).`, { hint: 'Name the schema the table is in.' });
          }
        }
      } catch (err) {
        throw Object.assign(new Error('with identity'), { inner: err, identity });
      }
      this.expireAt(channel, identity);
    } catch (err) {
      const inner = (err as { inner?: unknown }).inner ?? err;
      const body = await this.errorBody(inner, (err as { identity?: Identity }).identity);
      this.closeChannel(channel);
      return this.reply(m, 'error', body);
    }
    if (channel.closed) return;
    const answer = (): void => {
      if (channel.closed || channel.joined) return;
      const ids = channel.bindings.map((b) => ({ id: b.id, event: b.event, schema: b.schema, table: b.table, ...(b.filter === undefined ? {} : { filter: b.filter }) }));
      this.reply(m, 'ok', JSON.stringify({ postgres_changes: ids }));
      channel.joined = true;
      this.systemMessage(channel, 'postgres_changes', 'ok', 'Subscribed to PostgreSQL');
      for (const text of channel.pending) this.sendText(text);
      channel.pending = [];
    };
    if (channel.bindings.every((b) => b.ready)) answer();
    else channel.whenReady = answer;
  }

  private binding(w: Readonly<Record<string, unknown>>): Binding {
    const event = w['event'];
    const schema = w['schema'];
    const table = w['table'];
    const filter = w['filter'];
    if (typeof event !== 'string' || !servedEvents.has(event)) throw notServed(`The event ${JSON.stringify(event)} is not served; use "*", "INSERT", "UPDATE" or "DELETE".`);
    if (typeof table !== 'string' || table === '' || table === '*') throw notServed('Name one table per postgres_changes binding: a whole schema (`table` absent or "*") is not served.');
    if (typeof schema !== 'string' || schema === '' || schema === '*') throw notServed('Name the table\'s schema in the postgres_changes binding.');
    if (filter !== undefined && filter !== null && typeof filter !== 'string') throw notServed('`filter` is a text such as `status=eq.paid`.');
    return { id: this.nextId++, event, schema, table, filter: typeof filter === 'string' ? filter : undefined, ready: false };
  }

  /** Where one binding's events go: through the channel, its event kind only. */
  private sink(channel: Channel, binding: Binding): FeedSink {
    const connection = this;
    return {
      get closed() {
        return channel.closed || connection.closed;
      },
      send(events: readonly FeedEvent[], shared: Map<string, unknown>): number {
        if (this.closed) return 0;
        const table = binding.subscription?.table;
        if (table === undefined) return 0;
        let data = shared.get('realtime') as string[] | undefined;
        if (data === undefined) shared.set('realtime', (data = changeData(table, events)));
        for (let i = 0; i < events.length; i++) {
          if (binding.event !== '*' && binding.event !== events[i]!.event.toUpperCase()) continue;
          connection.toChannel(channel, writeMessage(connection.vsn, channel.joinRef, null, channel.topic, 'postgres_changes', `{"ids":[${binding.id}],"data":${data[i]!}}`));
        }
        return events.length;
      },
      ready() {
        binding.ready = true;
        if (channel.bindings.every((b) => b.ready)) channel.whenReady?.();
      },
      reload() {
        // Only a resume asks for it; this door never resumes.
      },
      end(event, data) {
        if (event === 'shutdown') return connection.drop(1001, 'the gateway is shutting down');
        connection.closeWithError(channel, String(data['message'] ?? data['reason'] ?? event));
      },
    };
  }

  private toChannel(channel: Channel, text: string): void {
    if (!channel.joined) channel.pending.push(text);
    else this.sendText(text);
  }

  /** A new token for a joined channel: the same caller goes on, any other outcome closes it. */
  private async renew(channel: Channel, token: unknown): Promise<void> {
    if (typeof token !== 'string' || token === '') return this.closeWithError(channel, 'The access_token message carries no token.');
    let identity: Identity;
    try {
      identity = await this.parts.authenticate(token, request(channel.bindings[0]!.table, []));
    } catch (err) {
      const body = JSON.parse(await this.errorBody(err, undefined)) as { reason: string };
      return this.closeWithError(channel, body.reason);
    }
    if (channel.closed) return;
    if (!channel.bindings.every((b) => b.subscription === undefined || b.subscription.sees(identity))) {
      return this.closeWithError(channel, 'The new token names another caller; join the channel again with it.');
    }
    this.expireAt(channel, identity);
  }

  private expireAt(channel: Channel, identity: Identity): void {
    clearTimeout(channel.expiry);
    channel.expiry = undefined;
    const exp = identity.claims['exp'];
    if (typeof exp !== 'number') return;
    const ms = Math.max(0, Math.min(exp * 1000 - Date.now(), 2 ** 31 - 1));
    channel.expiry = setTimeout(() => this.closeWithError(channel, 'Token has expired'), ms);
    channel.expiry.unref();
  }

  /** As Supabase does: a `system` error message, then `phx_close` (realtime-js: CLOSED). */
  private closeWithError(channel: Channel, message: string): void {
    if (channel.closed) return;
    this.closeChannel(channel);
    this.systemMessage(channel, 'system', 'error', message);
    this.send(channel.joinRef, null, channel.topic, 'phx_close', '{}');
  }

  private systemMessage(channel: Channel, extension: string, status: string, message: string): void {
    const subTopic = channel.topic.replace(/^realtime:/i, '');
    this.send(null, null, channel.topic, 'system', JSON.stringify({ extension, status, message, channel: subTopic }));
  }

  private closeChannel(channel: Channel): void {
    channel.closed = true;
    clearTimeout(channel.expiry);
    for (const b of channel.bindings) b.subscription?.close();
    channel.pending = [];
    if (this.channels.get(channel.topic) === channel) this.channels.delete(channel.topic);
  }

  private closeAll(): void {
    if (this.closed) return;
    this.closed = true;
    for (const channel of [...this.channels.values()]) this.closeChannel(channel);
  }

  private async errorBody(err: unknown, identity: Identity | undefined): Promise<string> {
    const shown = await this.parts.publicError(err, identity);
    if (shown instanceof GatewayError) return JSON.stringify({ reason: shown.message, code: shown.code, ...(shown.hint === undefined ? {} : { hint: shown.hint }) });
    this.parts.log(`realtime join failed: ${err instanceof Error ? err.message : String(err)}`);
    return JSON.stringify({ reason: 'The subscription could not be made.', code: 'INTERNAL_ERROR' });
  }

  private reply(m: PhoenixMessage, status: 'ok' | 'error', response: string): void {
    this.send(m.joinRef, m.ref, m.topic, 'phx_reply', `{"status":"${status}","response":${response}}`);
  }

  private send(joinRef: string | null, ref: string | null, topic: string, event: string, payload: string): void {
    this.sendText(writeMessage(this.vsn, joinRef, ref, topic, event, payload));
  }

  private sendText(text: string): void {
    if (this.socket.readyState !== this.socket.OPEN) return;
    if (this.socket.bufferedAmount > this.parts.maxBufferedBytes) return this.drop(1013, 'the client read too slowly');
    this.socket.send(text);
  }
}

/** The list request of the default grammar a binding stands for. */
function request(table: string, query: readonly (readonly [string, string])[]): GatewayRequest {
  return {
    id: `realtime-${++requests}`,
    method: 'GET',
    segments: [table],
    rawSegments: [table],
    query,
    headers: { accept: 'application/json' },
    body: undefined,
    loopback: false,
  };
}

function asObject(value: unknown): Readonly<Record<string, unknown>> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

function notServed(message: string): GatewayError {
  return new GatewayError('PARSE_ERROR', message, { hint: 'See docs/postgrest-dialect.md, "Realtime".' });
}
