/**
 * `@opentelemetry/api`, an optional peer dependency (docs/observability.md): required only when
 * the `tracing` option is on, so a gateway without tracing never loads it. The api keeps the
 * registered SDK in a process-wide global, so this copy sees the host's tracer provider and
 * propagator even when the host installed its own copy of the package.
 */
import type * as TraceApi from '@opentelemetry/api';

export type { TraceApi };

/** The api module, or undefined when it is not installed. */
export function loadTraceApi(): typeof TraceApi | undefined {
  try {
    return require('@opentelemetry/api') as typeof TraceApi;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'MODULE_NOT_FOUND') return undefined;
    throw err;
  }
}
