/**
 * Counters of the change feed (docs/change-feed.md, "Metrics"): subscribers and groups now,
 * events sent by kind, authorization statements run, and how far behind the database the feed
 * is. In: what lib/doors/changes/ reports. Out: read at scrape time by change-feed-metrics.ts.
 * Never: takes a label value from a request (event kinds are fixed).
 */
export const feedEventKinds = ['insert', 'update', 'delete'] as const;
export type FeedEventKind = (typeof feedEventKinds)[number];

export class ChangeFeedStats {
  subscribers = 0;
  groups = 0;
  authorizationStatements = 0;
  /** Seconds from the commit of the newest transaction in the last batch to its delivery; 0 when caught up. */
  lagSeconds = 0;
  readonly events: Record<FeedEventKind, number> = { insert: 0, update: 0, delete: 0 };
}
