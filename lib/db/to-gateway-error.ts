/**
 * Any error from the database path -> GatewayError, via the SQLSTATE table. Anything not in the
 * table becomes INTERNAL_ERROR with a request id; the original is logged, never sent.
 */
import { GatewayError, isGatewayError } from '../errors/gateway-error';
import { ruleForSqlstate } from '../errors/sqlstate-map';

interface DatabaseErrorLike {
  code?: unknown;
  message?: unknown;
  column?: unknown;
  constraint?: unknown;
  table?: unknown;
}

const connectionErrorCodes = new Set(['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'EAI_AGAIN']);

/** Returns undefined when the error is not one the table knows: the caller masks it. */
export function toGatewayError(err: unknown): GatewayError | undefined {
  if (isGatewayError(err)) return err;
  const e = (err ?? {}) as DatabaseErrorLike;
  const code = typeof e.code === 'string' ? e.code : '';
  if (/^[0-9A-Z]{5}$/.test(code)) {
    const rule = ruleForSqlstate(code);
    if (!rule) return undefined;
    const details: Record<string, string> = { sqlstate: code };
    if (typeof e.column === 'string') details.column = e.column;
    if (typeof e.constraint === 'string') details.constraint = e.constraint;
    if (typeof e.table === 'string') details.table = e.table;
    const message = rule.passMessage && typeof e.message === 'string' ? capitalize(e.message) : rule.message ?? 'The database rejected the request.';
    // The database is restarting, unreachable or busy: tell the client when to try again.
    const retry = rule.code === 'SERVICE_UNAVAILABLE' ? { headers: { 'Retry-After': '1' } } : {};
    return new GatewayError(rule.code, message, { details, ...(rule.hint === undefined ? {} : { hint: rule.hint }), ...retry, cause: err });
  }
  if (isConnectionError(e) || (err instanceof AggregateError && err.errors.some((inner) => isConnectionError((inner ?? {}) as DatabaseErrorLike)))) {
    return new GatewayError('SERVICE_UNAVAILABLE', 'The database is unavailable.', { headers: { 'Retry-After': '1' }, hint: 'Retry later.', cause: err });
  }
  return undefined;
}

/**
 * node-postgres' errors for a connection that failed or could not be made (pg/lib/client.js,
 * pg-pool/index.js): socket errors, "Connection terminated unexpectedly", a client that already
 * failed ("... is not queryable"), and the connect and pool-wait timeouts.
 */
function isConnectionError(e: DatabaseErrorLike): boolean {
  const code = typeof e.code === 'string' ? e.code : '';
  const message = typeof e.message === 'string' ? e.message : '';
  return (
    connectionErrorCodes.has(code) ||
    /timeout exceeded when trying to connect|Connection terminated|connect ECONNREFUSED|connect ENOENT|is not queryable|^timeout expired$/i.test(message)
  );
}

function capitalize(text: string): string {
  const s = text.endsWith('.') ? text : `${text}.`;
  return s.charAt(0).toUpperCase() + s.slice(1);
}
