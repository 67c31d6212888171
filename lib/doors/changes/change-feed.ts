/**
 * The change feed door (docs/change-feed.md): `GET {mount}/{table}/_changes` with
 * `Accept: text/event-stream`. A subscription is the list route's request on the same table: the
 * auth stage names the caller, the list route's parse stage reads its filters and `select`, the
 * policy stage narrows or refuses it, and the allow-list checks it as its own pattern
 * (`GET {table}/_changes ...`). Every change is then shown to it only through that same list,
 * run as the subscriber (authorize-changes.ts).
 *
 * Subscribers with the same identity settings, table, filters and columns form a group; each
 * batch the source hands over is checked once per group, and each event's text is made once per
 * group. One loop does everything in order (joins, resumes, batches), so a stream never sees
 * two transactions interleaved, and a resume replays exactly what lies between its
 * Last-Event-ID and the live stream.
 * In: what createGateway built. Out: an Express handler, start and close. Never: answers a
 * request that did not ask for an event stream with one, or sends a change it did not check.
 */
import type { Request, Response } from 'express';
import createDebug from 'debug';
import type pg from 'pg';
import type { Command, ReadCommand } from '../../command/command';
import { selects } from '../../command/read-items';
import { GatewayError } from '../../errors/gateway-error';
import { digestRequest, requestIdOf } from '../../http/digest-request';
import { sendError } from '../../http/send-error';
import type { ChangeFeedStats } from '../../ops/change-feed-stats';
import type { Database } from '../../pipeline/database';
import type { GatewayRequest } from '../../pipeline/gateway-request';
import type { Identity } from '../../pipeline/identity';
import type { ChangeFeedConfig, ResolvedConfig } from '../../pipeline/resolved-config';
import type { BaseContext, Stages } from '../../pipeline/stage-types';
import type { SchemaCache } from '../../schema/schema-types';
import type { ChangeSubscriber, FeedEvent, FeedSink } from '../../pipeline/change-subscription';
import { authorizeChanges, feedKeyTypes, type CheckParts, type GroupShape } from './authorize-changes';
import { ChangeSource, type ChangeTransaction, type RowChange } from './change-source';
import { EventStream, frame } from './event-stream';
import { readEventId } from './event-position';

const log = createDebug('tablegate:changes');

export interface ChangeFeedParts {
  readonly config: ResolvedConfig;
  readonly feed: ChangeFeedConfig;
  readonly stages: Stages;
  /** The allow-list's verdict on a subscription's pattern (throws QUERY_NOT_ALLOWED); absent: no allow-list. */
  readonly allowSubscription?: (command: Command) => void;
  /** The error to send, its name hints narrowed to the caller (as the request handler does). */
  readonly withHints: (err: unknown, identity: Identity | undefined) => Promise<unknown>;
  whenStarted(): Promise<void>;
  schema(): SchemaCache;
  /** The primary's Database: a replica may not have replayed the change yet. */
  readonly db: Database;
  /** A new session connection for the source (change_feed.database_url). */
  connect(): Promise<pg.Client>;
  readonly stats: ChangeFeedStats;
}

/** `subscribe` (ChangeSubscriber): other doors' subscribers, beside the SSE route's. */
export interface ChangeFeed extends ChangeSubscriber {
  handle(req: Request, res: Response): Promise<void>;
  /** Connects the source and checks what it needs; rejects with a GatewayConfigError naming the fix. */
  start(): Promise<void>;
  /** Ends every stream with a final `shutdown` event and stops the source. */
  close(): Promise<void>;
}

interface Subscriber {
  readonly sink: FeedSink;
  readonly group: Group;
  readonly caller: string;
  left: boolean;
}

interface Group extends GroupShape {
  readonly key: GroupShape['key'];
  readonly id: string;
  /** groupKey(): what decides what the members see. */
  readonly sameness: string;
  readonly members: Set<Subscriber>;
}

interface Join {
  readonly subscriber: Subscriber;
  /** Last-Event-ID, when the client resumes. */
  readonly after: string | undefined;
}

/** Parameters of the list route a stream has no use for: it has no pages and no order but the commits'. */
const refusedParameters = ['sort', 'limit', 'offset', 'cursor', 'distinct', 'count', 'expand'];
/** Most changes kept for resuming, whatever retention_s says (bounds the memory it takes). */
const maxRetainedChanges = 100_000;
/** Groups checked at the same time (each takes one pool connection for one statement). */
const checkConcurrency = 4;

export function createChangeFeed(parts: ChangeFeedParts): ChangeFeed {
  const { config, feed, stages, stats } = parts;
  const groups = new Map<string, Group>();
  const callers = new Map<string, number>();
  let joins: Join[] = [];
  /** Changes kept for resuming, oldest first, with when they were received. */
  let retained: { readonly at: number; readonly change: RowChange }[] = [];
  /** Every change after this position is in `retained`. */
  let horizon = '';
  /** The position of the last change handed on (or the slot's, before any). */
  let head = '';
  let closing = false;
  let subscribers = 0;
  let started: Promise<void> | undefined;

  const check: CheckParts = {
    stages,
    base: (request: GatewayRequest): BaseContext => ({ request, config, schema: parts.schema(), db: parts.db }),
    counted: () => void stats.authorizationStatements++,
    maxKeys: Math.max(1, Math.min(1000, config.maxLimit)),
  };

  const source = new ChangeSource({
    connect: () => parts.connect(),
    slot: feed.slotName,
    publication: feed.publication,
    pollIntervalMs: feed.pollIntervalMs,
    batchChanges: feed.batchChanges,
    log: (m) => log(m),
    onBatch: (transactions) => processBatch(transactions),
  });

  async function processBatch(transactions: readonly ChangeTransaction[]): Promise<void> {
    const now = Date.now();
    prune(now);
    const pending = joins;
    joins = [];
    for (const join of pending) await admit(join);
    const changes = transactions.flatMap((t) => t.changes);
    const newest = transactions[transactions.length - 1];
    stats.lagSeconds = newest ? Math.max(0, (now - newest.commitTime) / 1000) : 0;
    if (changes.length === 0) return;
    retain(changes, now);
    await deliver(changes);
  }

  function retain(changes: readonly RowChange[], now: number): void {
    for (const change of changes) retained.push({ at: now, change });
    head = changes[changes.length - 1]!.id;
    prune(now);
  }

  /** Drops what is older than retention_s (or past the count bound); the horizon moves past it. */
  function prune(now: number): void {
    const oldest = now - feed.retentionS * 1000;
    let drop = 0;
    while (drop < retained.length && (retained[drop]!.at < oldest || retained.length - drop > maxRetainedChanges)) drop++;
    if (drop > 0) {
      horizon = retained[drop - 1]!.change.id;
      retained = retained.slice(drop);
    }
  }

  /** Each group with changes to its table: one check, then the same event texts to each member. */
  async function deliver(changes: readonly RowChange[]): Promise<void> {
    const byTable = new Map<string, RowChange[]>();
    for (const c of changes) {
      const name = `${c.schema}.${c.table}`;
      const list = byTable.get(name);
      if (list) list.push(c);
      else byTable.set(name, [c]);
    }
    const work = [...groups.values()].filter((g) => byTable.has(`${g.table.schema}.${g.table.name}`));
    for (let i = 0; i < work.length; i += checkConcurrency) {
      await Promise.all(work.slice(i, i + checkConcurrency).map((g) => sendTo(g, [...g.members], byTable.get(`${g.table.schema}.${g.table.name}`)!)));
    }
  }

  async function sendTo(group: Group, members: readonly Subscriber[], changes: readonly RowChange[]): Promise<void> {
    if (members.length === 0 || changes.length === 0) return;
    let events: FeedEvent[];
    try {
      events = await authorizeChanges(check, group, changes, `changes-${group.id}`);
    } catch (err) {
      // The subscription no longer holds (a table dropped, a grant revoked): its streams end saying so.
      const public_ = await parts.withHints(err, group.identity);
      const body = public_ instanceof GatewayError ? { code: public_.code, message: public_.message } : { code: 'INTERNAL_ERROR', message: 'The change feed could not check a change.' };
      log('group check failed: %s', err instanceof Error ? err.message : String(err));
      for (const m of members) m.sink.end('error', body);
      return;
    }
    if (events.length === 0) return;
    const shared = new Map<string, unknown>();
    for (const m of members) {
      const sent = m.sink.closed ? 0 : m.sink.send(events, shared);
      for (let i = 0; i < sent; i++) stats.events[events[i]!.event]++;
    }
  }

  /** A new stream joins its group: after a resume's replay, or a `reload` when it is too far back. */
  async function admit(join: Join): Promise<void> {
    const { subscriber, after } = join;
    if (subscriber.sink.closed) return;
    if (after !== undefined) {
      if (after < horizon) {
        subscriber.sink.reload();
      } else {
        const table = subscriber.group.table;
        const missed = retained.filter((r) => r.change.id > after && r.change.schema === table.schema && r.change.table === table.name).map((r) => r.change);
        await sendTo(subscriber.group, [subscriber], missed);
      }
    }
    if (subscriber.sink.closed) return;
    subscriber.sink.ready(head, subscriber.group.table.name);
    subscriber.group.members.add(subscriber);
  }

  function leave(subscriber: Subscriber): void {
    if (subscriber.left) return;
    subscriber.left = true;
    subscribers--;
    stats.subscribers = subscribers;
    const left = (callers.get(subscriber.caller) ?? 1) - 1;
    if (left === 0) callers.delete(subscriber.caller);
    else callers.set(subscriber.caller, left);
    const group = subscriber.group;
    group.members.delete(subscriber);
    joins = joins.filter((j) => j.subscriber !== subscriber);
    if (group.members.size === 0 && !joins.some((j) => j.subscriber.group === group)) {
      groups.delete(group.id);
      stats.groups = groups.size;
    }
  }

  async function subscribe(req: Request, res: Response, requestId: string): Promise<void> {
    if (closing) throw new GatewayError('SERVICE_UNAVAILABLE', 'The gateway is shutting down.', { headers: { 'Retry-After': '1' } });
    const accept = req.headers.accept ?? '';
    if (!/(^|,)\s*text\/event-stream\s*(;|,|$)/i.test(accept)) {
      throw new GatewayError('NOT_ACCEPTABLE', 'The change feed answers text/event-stream only.', { hint: 'Send `Accept: text/event-stream`.' });
    }
    await whenReady();
    const digested = digestRequest(req, requestId, undefined);
    const segment = digested.segments[0]!;
    const request: GatewayRequest = { ...digested, segments: [segment], rawSegments: [digested.rawSegments[0] ?? segment], headers: { ...digested.headers, accept: 'application/json' } };
    const base = check.base(request);
    const identity = await stages.auth(base);
    try {
      return await subscribeAs(identity, base, req, res);
    } catch (err) {
      throw Object.assign(new Error('with identity'), { inner: err, identity });
    }
  }

  async function subscribeAs(identity: Identity, base: BaseContext, req: Request, res: Response): Promise<void> {
    const shape = await prepare(identity, base);
    const lastEventId = req.headers['last-event-id'];
    const after = typeof lastEventId === 'string' && lastEventId !== '' ? readEventId(lastEventId) : undefined;
    const caller = identity.source === 'anonymous' ? `ip\u0000${req.socket.remoteAddress ?? ''}` : `${identity.tenantId}\u0000${identity.userId}`;
    const holder: { subscriber?: Subscriber; expiry?: NodeJS.Timeout } = {};
    enroll(shape, caller, after, (leaveIt) => {
      const stream = new EventStream(res, { maxBufferedEvents: feed.maxBufferedEvents, heartbeatMs: feed.heartbeatS * 1000 }, () => {
        clearTimeout(holder.expiry);
        leaveIt();
      });
      stream.open();
      const exp = identity.claims['exp'];
      if (typeof exp === 'number') {
        const ms = Math.max(0, Math.min(exp * 1000 - Date.now(), 2 ** 31 - 1));
        holder.expiry = setTimeout(() => stream.end('expired', { reason: 'The token expired.', action: 'Subscribe again with a new token and Last-Event-ID.' }), ms);
        holder.expiry.unref();
      }
      return sseSink(stream);
    });
  }

  /** The list request's parse, policy and allow-list as `identity`: the group's shape, or the error to answer. */
  async function prepare(identity: Identity, base: BaseContext): Promise<GroupShape> {
    const request = base.request;
    for (const [name] of request.query) {
      if (refusedParameters.includes(name)) throw new GatewayError('PARSE_ERROR', `\`${name}\` has no meaning on a change feed.`, { hint: 'A subscription takes the list route\'s filters and `select` only.' });
    }
    const ctx = { ...base, identity };
    const parsed = await stages.parse(ctx);
    if (parsed.kind !== 'read' || parsed.media !== 'page' || parsed.parent !== undefined || parsed.export !== undefined) throw new GatewayError('NOT_FOUND', 'No such route.');
    const command = (await stages.policy({ ...ctx, command: parsed })) as ReadCommand;
    parts.allowSubscription?.(command);
    const table = command.table;
    const key = table.primaryKey.length === 1 ? table.primaryKey[0]! : undefined;
    if (key === undefined || !feedKeyTypes.has(key.typeOid)) {
      throw new GatewayError('PARSE_ERROR', `Table \`${table.name}\` has no change feed: it needs a primary key of one column of an integer, text or uuid type.`);
    }
    let query = request.query;
    let stripKey = false;
    if (!selects(command.root, key)) {
      const select = request.query.find(([k]) => k === 'select')?.[1];
      if (select === undefined) throw new GatewayError('FORBIDDEN', `A change feed of \`${table.name}\` needs its key \`${key.name}\`, which this caller may not read.`);
      query = request.query.map(([k, v]): readonly [string, string] => (k === 'select' ? ['select', `${v},"${key.name.replace(/"/g, '""')}"`] : [k, v]));
      stripKey = true;
      const withKey = await stages.parse({ ...ctx, request: { ...request, query } });
      const allowed = await Promise.resolve().then(() => stages.policy({ ...ctx, request: { ...request, query }, command: withKey })).catch((err: unknown) => {
        if (err instanceof GatewayError && err.code === 'FORBIDDEN') throw new GatewayError('FORBIDDEN', `A change feed of \`${table.name}\` needs its key \`${key.name}\`, which this caller may not read.`);
        throw err;
      });
      if (allowed.kind !== 'read' || !selects(allowed.root, key)) throw new GatewayError('FORBIDDEN', `A change feed of \`${table.name}\` needs its key \`${key.name}\`, which this caller may not read.`);
    }
    const tenantColumn = feed.tenantColumn !== undefined && table.columnsByName.has(feed.tenantColumn) ? feed.tenantColumn : undefined;
    return { table, segment: request.segments[0]!, key, query, stripKey, identity, tenantColumn };
  }

  /** Counts the subscriber against the limits, puts it in its group and queues its join. */
  function enroll(shape: GroupShape, caller: string, after: string | undefined, open: (leave: () => void) => FeedSink): Subscriber {
    if (subscribers >= feed.maxSubscriptions) {
      throw new GatewayError('SERVICE_UNAVAILABLE', 'This gateway serves as many change feed streams as it may (change_feed.max_subscriptions).', { headers: { 'Retry-After': '10' }, hint: 'Retry later, or on another instance.' });
    }
    if ((callers.get(caller) ?? 0) >= feed.maxSubscriptionsPerCaller) {
      throw new GatewayError('RATE_LIMITED', 'This caller has as many change feed streams open as it may (change_feed.max_subscriptions_per_caller).', { headers: { 'Retry-After': '10' }, hint: 'Close a stream first.' });
    }
    const sameness = groupKey(shape);
    let group = groups.get(sameness);
    if (group === undefined) {
      group = { ...shape, id: String(groups.size) + ':' + hashOf(sameness), sameness, members: new Set() };
      groups.set(sameness, group);
      stats.groups = groups.size;
    }
    subscribers++;
    stats.subscribers = subscribers;
    callers.set(caller, (callers.get(caller) ?? 0) + 1);
    const holder: { subscriber?: Subscriber } = {};
    const sink = open(() => leave(holder.subscriber!));
    const subscriber: Subscriber = { sink, group, caller, left: false };
    holder.subscriber = subscriber;
    joins.push({ subscriber, after });
    log('subscribed to %s (group %s, %d members)', shape.table.name, group.id, group.members.size + 1);
    return subscriber;
  }

  async function whenReady(): Promise<void> {
    if (closing) throw new GatewayError('SERVICE_UNAVAILABLE', 'The gateway is shutting down.', { headers: { 'Retry-After': '1' } });
    try {
      await parts.whenStarted();
      if (started === undefined) throw new Error('the change source is not started');
      await started;
    } catch {
      throw new GatewayError('SERVICE_UNAVAILABLE', 'The change feed is not ready: the gateway or its change source did not start.', { headers: { 'Retry-After': '5' } });
    }
  }

  return {
    async handle(req, res) {
      const requestId = requestIdOf(req);
      res.setHeader('X-Request-Id', requestId);
      try {
        await subscribe(req, res, requestId);
      } catch (err) {
        const inner = (err as { inner?: unknown }).inner;
        const identity = (err as { identity?: Identity }).identity;
        const answer = await parts.withHints(inner ?? err, identity);
        if (!res.headersSent) sendError(res, answer, requestId);
      }
    },
    async subscribe(identity, request, caller, sink) {
      await whenReady();
      const shape = await prepare(identity, check.base(request));
      const sameness = groupKey(shape);
      const subscriber = enroll(shape, caller, undefined, () => sink);
      return {
        table: shape.table,
        close: () => leave(subscriber),
        sees: (other) => groupKey({ ...shape, identity: other }) === sameness,
      };
    },
    start() {
      if (started === undefined) {
        const starting = source.start().then((position) => {
          head = horizon = beforeLsn(position);
        });
        // A start that failed (the database was unreachable) may be tried again by the next one.
        starting.catch(() => {
          if (started === starting) started = undefined;
        });
        started = starting;
      }
      return started;
    },
    async close() {
      closing = true;
      for (const group of groups.values()) for (const m of [...group.members]) m.sink.end('shutdown', { reason: 'The gateway is shutting down.', action: 'Reconnect with Last-Event-ID.' });
      for (const j of [...joins]) j.subscriber.sink.end('shutdown', { reason: 'The gateway is shutting down.', action: 'Reconnect with Last-Event-ID.' });
      joins = [];
      if (started) await started.catch(() => undefined);
      await source.stop();
    },
  };
}

/** The SSE stream as a sink: each event's frame is made once per group and batch. */
function sseSink(stream: EventStream): FeedSink {
  return {
    get closed() {
      return stream.closed;
    },
    send(events, shared) {
      let frames = shared.get('sse') as string[] | undefined;
      if (frames === undefined) shared.set('sse', (frames = events.map((e) => frame(e.id, e.event, e.data))));
      let sent = 0;
      for (const f of frames) {
        if (!stream.send(f)) break;
        sent++;
      }
      return sent;
    },
    ready(position, table) {
      stream.send(frame(position, 'ready', JSON.stringify({ table })));
    },
    reload() {
      stream.send(frame(undefined, 'reload', JSON.stringify({ reason: 'The changes after Last-Event-ID are no longer kept (change_feed.retention_s).', action: 'Read the list again, then follow this stream.' })));
    },
    end(event, data) {
      stream.end(event, data);
    },
  };
}

/** Everything that can change what a subscriber sees: identity settings (not a token's times), table, filters and columns. */
function groupKey(shape: GroupShape): string {
  const { identity } = shape;
  const claims = Object.entries(identity.claims).filter(([k]) => !timeClaims.has(k)).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return JSON.stringify([shape.table.schema, shape.table.name, identity.source, identity.tenantId, identity.userId, identity.agentId, identity.role, [...identity.scopes].sort(), claims, shape.query]);
}

const timeClaims: ReadonlySet<string> = new Set(['exp', 'iat', 'nbf', 'jti']);

function hashOf(text: string): string {
  let h = 0;
  for (let i = 0; i < text.length; i++) h = (Math.imul(h, 31) + text.charCodeAt(i)) | 0;
  return (h >>> 0).toString(16);
}

/** The position just before every change committed at or after `lsnKey` (16 hex digits). */
function beforeLsn(lsnKey: string): string {
  const previous = (BigInt(`0x${lsnKey}`) - 1n).toString(16).toUpperCase().padStart(16, '0');
  return `${previous}-FFFFFFFF`;
}
