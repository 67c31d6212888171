/**
 * Any error from the database path -> GatewayError, via the SQLSTATE table. Anything not in the
 * table becomes INTERNAL_ERROR with a request id; the original is logged, never sent.
 */
import { GatewayError, isGatewayError } from '../errors/gateway-error';
import { ruleForSqlstate } from '../errors/sqlstate-map';
import { ConnectionPolicyError, GssCircuitOpenError } from './connection/connection-policy-error';

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
  const policy = connectionPolicyError(err);
  if (policy) return policy;
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
    return new GatewayError(rule.code, message, { details, ...(rule.hint === undefined ? {} : { hint: rule.hint }), cause: err });
  }
  const message = typeof e.message === 'string' ? e.message : '';
  if (connectionErrorCodes.has(code) || /timeout exceeded when trying to connect|Connection terminated|connect ECONNREFUSED/i.test(message)) {
    return new GatewayError('SERVICE_UNAVAILABLE', 'The database is unavailable.', { headers: { 'Retry-After': '1' }, hint: 'Retry later.', cause: err });
  }
  return undefined;
}

/**
 * Connection-policy refusals, the open GSS circuit and TLS failures are the database being
 * unavailable to this gateway (503), never a 500; the detail stays in `cause` and the log.
 */
function connectionPolicyError(err: unknown): GatewayError | undefined {
  if (err instanceof GssCircuitOpenError) {
    const seconds = String(Math.max(1, Math.ceil(err.retryAfterMs / 1000)));
    return new GatewayError('SERVICE_UNAVAILABLE', 'The database is unavailable: its GSSAPI connections keep failing, so new ones are paused.', { headers: { 'Retry-After': seconds }, hint: 'Retry after the time in Retry-After.', cause: err });
  }
  if (err instanceof ConnectionPolicyError) {
    return new GatewayError('SERVICE_UNAVAILABLE', 'The gateway could not authenticate to the database.', { headers: { 'Retry-After': '5' }, hint: 'Retry later.', cause: err });
  }
  const e = (err ?? {}) as DatabaseErrorLike;
  const code = typeof e.code === 'string' ? e.code : '';
  const message = typeof e.message === 'string' ? e.message : '';
  if (/^ERR_(TLS|SSL)_|CERT|SELF_SIGNED|UNABLE_TO_/.test(code) || /does not support SSL connections|error establishing an SSL connection/.test(message)) {
    return new GatewayError('SERVICE_UNAVAILABLE', 'The database connection failed.', { headers: { 'Retry-After': '5' }, hint: 'Retry later.', cause: err });
  }
  return undefined;
}

function capitalize(text: string): string {
  const s = text.endsWith('.') ? text : `${text}.`;
  return s.charAt(0).toUpperCase() + s.slice(1);
}
