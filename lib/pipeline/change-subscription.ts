/**
 * What the change feed (lib/doors/changes) offers other doors (docs/change-feed.md, "Other
 * doors"): a subscription made of a list request as a caller, whose checked events go to a sink
 * the other door provides. Here, below the doors, so that a door reaches the feed without
 * importing it: createGateway hands the feed over as a ChangeSubscriber.
 */
import type { Identity } from './identity';
import type { GatewayRequest } from './gateway-request';
import type { Table } from '../schema/schema-types';

/** One change, as one subscription group may see it. */
export interface FeedEvent {
  readonly id: string;
  readonly event: 'insert' | 'update' | 'delete';
  /** The SSE event's data: `{"op", "table", "row"}`, or `{"op":"delete", "table", "key"}`. */
  readonly data: string;
  /** The row as the group's list renders it (JSON text); undefined for a delete. */
  readonly row: string | undefined;
  /** The key as a JSON object text (`{"id":7}`). */
  readonly key: string;
  /** When the change's transaction committed, ms since 1970. */
  readonly commitTime: number;
}

/**
 * Where one subscriber's events go: the SSE stream, or another door's connection. The feed calls
 * it from its one loop, in commit order.
 */
export interface FeedSink {
  readonly closed: boolean;
  /**
   * A batch's events for the subscriber's group, in commit order. `shared` is one map per group
   * and batch, for what a sink derives from the events once for every member. Returns how many
   * were taken (fewer once the sink closed).
   */
  send(events: readonly FeedEvent[], shared: Map<string, unknown>): number;
  /** The subscriber joined: every change committed from now on is checked for it. */
  ready(position: string, table: string): void;
  /** A resume asked for changes no longer kept (SSE only). */
  reload(): void;
  /** A final event (`shutdown`, `error`, ...) and the end. */
  end(event: string, data: Readonly<Record<string, unknown>>): void;
}

/** One subscriber of `subscribe`. */
export interface FeedSubscription {
  /** The table the request named, as the schema cache has it. */
  readonly table: Table;
  /** Leaves the group (idempotent). */
  close(): void;
  /** Whether `identity` (a refreshed token) sees exactly what the subscription's identity sees. */
  sees(identity: Identity): boolean;
}

export interface ChangeSubscriber {
  /**
   * A subscription from another door: `request` is a list request of the default grammar (one
   * segment, its filters and `select`) made as `identity`. It goes through the same parse,
   * policy and allow-list as the SSE route's; it throws the GatewayError that route would
   * answer. `caller` counts toward max_subscriptions_per_caller.
   */
  subscribe(identity: Identity, request: GatewayRequest, caller: string, sink: FeedSink): Promise<FeedSubscription>;
}
