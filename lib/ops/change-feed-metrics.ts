/**
 * The change feed's series of GET /metrics (docs/change-feed.md, "Metrics"), read from
 * ChangeFeedStats at scrape time, kept apart from metrics.ts like the exports' series.
 */
import { Counter, Gauge } from 'prom-client';
import { feedEventKinds, type ChangeFeedStats } from './change-feed-stats';

export function changeFeedMetrics(prefix: string, stats: ChangeFeedStats): (Gauge | Counter | Counter<'op'>)[] {
  const gauge = (name: string, help: string, value: () => number) =>
    new Gauge({
      name: `${prefix}${name}`, help, registers: [],
      collect() {
        this.set(value());
      },
    });
  return [
    gauge('change_feed_subscribers', 'Change feed streams open now.', () => stats.subscribers),
    gauge('change_feed_groups', 'Subscription groups (subscribers that see the same changes) now.', () => stats.groups),
    gauge('change_feed_lag_seconds', 'From the commit of the newest change of the last batch to its delivery; 0 when caught up.', () => stats.lagSeconds),
    new Counter({
      name: `${prefix}change_feed_events_total`, help: 'Change events written to subscribers, by operation.', labelNames: ['op'], registers: [],
      collect() {
        this.reset();
        for (const op of feedEventKinds) this.inc({ op }, stats.events[op]);
      },
    }),
    new Counter({
      name: `${prefix}change_feed_authorization_statements_total`, help: 'Statements run to decide which changes a group may see (one per group per batch).', registers: [],
      collect() {
        this.reset();
        this.inc(stats.authorizationStatements);
      },
    }),
  ];
}
