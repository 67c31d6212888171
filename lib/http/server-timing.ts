/**
 * The `Server-Timing` response header (W3C Server Timing): milliseconds spent in the auth stage,
 * in the database and in total, e.g. `auth;dur=0.4, db;dur=2.1, total;dur=3.0`. Sent on every
 * gateway response, errors included, unless `server_timing = false` (docs/configuration.md).
 * In: the request's measures and its total time. Out: the header value. Never: a name or
 * description taken from the request (only these three fixed metric names).
 */
import type { RequestMeasures } from '../pipeline/request-measures';

export function serverTiming(measures: RequestMeasures, totalMs: number): string {
  return `auth;dur=${ms(measures.authMs)}, db;dur=${ms(measures.dbMs)}, total;dur=${ms(totalMs)}`;
}

function ms(value: number): string {
  return value.toFixed(1);
}
