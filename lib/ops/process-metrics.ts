/**
 * prom-client's default process metrics (CPU, memory, event loop lag, GC, handles), in one
 * registry per process, made on first use and shared by every gateway that keeps its own
 * registry. They describe the process, not a gateway; and collectDefaultMetrics starts observers
 * (GC, event loop delay) that are never stopped, so one set per process, not one per gateway.
 * A host that passes its own registry gets them there only with `metrics.defaultMetrics: true`.
 */
import { collectDefaultMetrics, Registry } from 'prom-client';

let shared: Registry | undefined;

export function processRegistry(): Registry {
  if (shared === undefined) {
    shared = new Registry();
    collectDefaultMetrics({ register: shared });
  }
  return shared;
}
