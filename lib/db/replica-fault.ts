/**
 * What a replica's failure on a read means for routing.
 * In: whatever the replica's Database.run threw. Out:
 *   'down'   - the replica cannot serve (no connection, shutting down, out of resources, any error
 *              the primary would answer with 503, any failure that is not a database's answer):
 *              take it out of rotation and retry on the primary;
 *   'behind' - this statement failed because of what the replica is (a recovery conflict, an object
 *              a migration made that it has not replayed yet, a standby-only restriction): retry
 *              on the primary, keep the replica;
 *   undefined - the request's own error (bad value, timeout, permission): the primary would say the
 *              same, so it goes to the caller as it is.
 * Retrying is safe because only read-only plans go to replicas: the failed attempt changed nothing.
 */
import { isGatewayError } from '../errors/gateway-error';
import { toGatewayError } from './to-gateway-error';

export type ReplicaFault = 'down' | 'behind';

/**
 * SQLSTATEs a hot standby raises that the primary would not: 40001 and 40P01 are how recovery
 * conflicts cancel a query (PostgreSQL docs §27.4.2, "Handling Query Conflicts"); 42P01, 42703,
 * 42883 and 3F000 an object the primary already has; 25006, 55000 and 0A000 a function that
 * needs a transaction id or other state a standby cannot give (§27.4.3).
 */
const replicaOnly = new Set(['40001', '40P01', '42P01', '42703', '42883', '3F000', '25006', '55000', '0A000']);

/** Refusals of a session that the SQLSTATE table may not call 503: no such database, database dropped. */
const refused = new Set(['3D000', '57P04']);

export function replicaFault(err: unknown): ReplicaFault | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  const cause = (err as { cause?: { code?: unknown } } | null)?.cause;
  if (typeof code === 'string' && replicaOnly.has(code)) return 'behind';
  // A GatewayError made from a database error (e.g. "did not answer in time") keeps the original as its cause.
  if (typeof cause?.code === 'string' && replicaOnly.has(cause.code)) return 'behind';
  if (typeof code === 'string' && refused.has(code)) return 'down';
  const mapped = toGatewayError(err);
  if (mapped) return mapped.code === 'SERVICE_UNAVAILABLE' ? 'down' : undefined;
  // No SQLSTATE and not a known error: the database did not answer at all (e.g. node-postgres'
  // "Client has encountered a connection error and is not queryable" for a connection that died
  // while idle). The replica's connection is suspect; the primary gives the real answer.
  return isGatewayError(err) ? undefined : 'down';
}
