/**
 * The `metrics` option (docs/configuration.md, "Options form"), in a file of its own: it is part of
 * the public declarations (lib/index.ts), which must not reach pg's types through metrics.ts.
 */
import type { Registry } from 'prom-client';

/** Where the gateway's Prometheus metrics go (docs/configuration.md, "Options form"). */
export interface MetricsOptions {
  /** A prom-client Registry of the host's: the gateway registers its series there. Default: one of its own. */
  readonly registry?: Registry;
  /** Start of every metric name; default `tablegate_`. Two gateways sharing a registry need different ones. */
  readonly prefix?: string;
  /** prom-client's process metrics: default on with the gateway's own registry, off with a host's. */
  readonly defaultMetrics?: boolean;
}
