/**
 * Any error from the database path -> GatewayError, via the SQLSTATE table (lib/errors/sqlstate-map.ts).
 * In: the error, and what the failing statement ran for (the command's kind and relation), so a rule
 * whose hint or code names a cause applies only when that cause is certain (docs/errors.md).
 * Out: a GatewayError, or undefined for anything the table does not know: the caller masks it as
 * INTERNAL_ERROR with a request id; the original is logged, never sent.
 * Never: sends PostgreSQL's context (`where`), which can quote SQL text; only the name of the
 * function it points at.
 */
import type { OperationName } from '../command/command';
import { GatewayError, isGatewayError } from '../errors/gateway-error';
import { functionStatus } from '../errors/function-status';
import { rulesForSqlstate, type SqlstateCause } from '../errors/sqlstate-map';
import type { Table } from '../schema/schema-types';
import { ConnectionPolicyError, GssCircuitOpenError } from './connection/connection-policy-error';
import { StreamListenerError } from './catch-stream-errors';

interface DatabaseErrorLike {
  code?: unknown;
  message?: unknown;
  detail?: unknown;
  hint?: unknown;
  where?: unknown;
  routine?: unknown;
  column?: unknown;
  constraint?: unknown;
  table?: unknown;
}

/** What the failing statement was run for. Without it, only causes that need no context can hold. */
export interface ErrorContext {
  /** What the command is (`operationOf`): its kind, or `explain` / `aggregate` for a list answered so. */
  readonly kind: OperationName;
  /** The relation a read or write addresses (not set for a call). */
  readonly relation?: Pick<Table, 'schema' | 'name' | 'kind'>;
  /** An insert with ON CONFLICT (upsert). */
  readonly onConflict?: boolean;
}

/** What the rules' causes are decided on. */
interface Facts {
  readonly sqlstate: string;
  readonly message: string;
  readonly routine: string;
  /** The function or trigger whose body raised the error, when it was not the request's own statement. */
  readonly fn: string | undefined;
  readonly context: ErrorContext | undefined;
}

const connectionErrorCodes = new Set(['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'EAI_AGAIN']);

/** Returns undefined when the error is not one the table knows: the caller masks it. */
export function toGatewayError(err: unknown, context?: ErrorContext): GatewayError | undefined {
  if (isGatewayError(err)) return err;
  const policy = connectionPolicyError(err);
  if (policy) return policy;
  const e = (err ?? {}) as DatabaseErrorLike;
  const code = typeof e.code === 'string' ? e.code : '';
  if (/^[0-9A-Z]{5}$/.test(code)) {
    const facts: Facts = {
      sqlstate: code,
      message: text(e.message) ?? '',
      routine: text(e.routine) ?? '',
      fn: functionOf(text(e.where)),
      context,
    };
    const rule = rulesForSqlstate(code).find((r) => r.when === undefined || holds(r.when, facts));
    if (!rule) return undefined;
    const details: Record<string, string> = { sqlstate: code };
    if (typeof e.column === 'string') details.column = e.column;
    if (typeof e.constraint === 'string') details.constraint = e.constraint;
    if (typeof e.table === 'string') details.table = e.table;
    if (facts.fn !== undefined) Object.assign(details, { source: 'function', function: facts.fn });
    if (rule.passDetail && text(e.detail) !== undefined) details.detail = text(e.detail)!;
    const message = rule.passMessage && typeof e.message === 'string' ? capitalize(e.message) : rule.message ?? 'The database rejected the request.';
    const hint = rule.hint !== undefined ? fillHint(rule.hint, facts) : rule.passDetail ? text(e.hint) : undefined;
    const status = rule.code === 'FUNCTION_STATUS' ? functionStatus(code) : undefined;
    // The database is restarting, unreachable or busy: tell the client when to try again. An
    // unpopulated materialized view stays so until an operator refreshes it: no Retry-After.
    const retry = rule.code === 'SERVICE_UNAVAILABLE' && rule.when !== 'unpopulated-matview' ? { headers: { 'Retry-After': '1' } } : {};
    return new GatewayError(rule.code, message, { details, ...(hint === undefined ? {} : { hint }), ...(status === undefined ? {} : { status }), ...retry, cause: err });
  }
  // The driver threw while reading the answer (catch-stream-errors.ts); the connection is gone.
  if (err instanceof StreamListenerError) {
    return new GatewayError('SERVICE_UNAVAILABLE', 'Reading the database\'s answer failed; the connection was closed.', { headers: { 'Retry-After': '1' }, hint: 'Retry later.', cause: err });
  }
  if (isConnectionError(e) || (err instanceof AggregateError && err.errors.some((inner) => isConnectionError((inner ?? {}) as DatabaseErrorLike)))) {
    return new GatewayError('SERVICE_UNAVAILABLE', 'The database is unavailable.', { headers: { 'Retry-After': '1' }, hint: 'Retry later.', cause: err });
  }
  return undefined;
}

/** Each cause of lib/errors/sqlstate-map.ts; "own" = the request's own statement, not a function body. */
function holds(cause: SqlstateCause, f: Facts): boolean {
  const own = f.fn === undefined && f.context !== undefined;
  const kind = f.context?.kind;
  switch (cause) {
    case 'in-function':
      return f.fn !== undefined;
    case 'http-status':
      return functionStatus(f.sqlstate) !== undefined;
    case 'upsert':
      return own && kind === 'insert' && f.context?.onConflict === true;
    case 'write':
      return own && (kind === 'insert' || kind === 'update' || kind === 'delete');
    case 'write-to-view':
      return holds('write', f) && f.context?.relation?.kind === 'v';
    case 'row-scan':
      return own && (kind === 'list' || kind === 'aggregate' || kind === 'explain');
    case 'json-operator':
      // Type names are not translated, so this holds whatever the server's lc_messages.
      return f.fn === undefined && /\bjson\b/.test(f.message);
    case 'unpopulated-matview':
      // ExecOpenScanRelation raises nothing else; the routine name does not depend on lc_messages.
      return f.routine === 'ExecOpenScanRelation' || /^materialized view ".*" has not been populated$/.test(f.message);
    case 'non-volatile-write':
      // Only the English message is certain: the same routines raise 0A000 for other statements too.
      return /is not allowed in a non-volatile function/.test(f.message);
    case 'caller-read':
      return own && kind === 'read';
    case 'text-search-config':
      // regconfig's input function (PostgreSQL 16 and later), or the lookup it called before;
      // routine names do not depend on lc_messages.
      return f.fn === undefined && (f.routine === 'regconfigin' || f.routine === 'get_ts_config_oid');
    case 'value-syntax':
      // Type names are not translated, so this holds whatever the server's lc_messages.
      return f.fn === undefined && /\b(tsvector|tsquery|jsonpath)\b/.test(f.message);
  }
}

/**
 * The innermost function line of PostgreSQL's context, e.g. `PL/pgSQL function api.pay(integer) line 3
 * at RAISE`, `SQL function "pay" statement 1` or `PL/Python function "pay"`: the function's name.
 * Undefined when no function body raised the error (also for a SQL function inlined into the
 * request's statement, which runs as part of it).
 */
export function functionOf(where: string | undefined): string | undefined {
  for (const line of (where ?? '').split('\n')) {
    const m = /^PL\/\w+ function ((?:"(?:[^"]|"")*"|[^\s("])+)\(/.exec(line) ?? /^(?:SQL|PL\/\w+) function "([^"]+)"/.exec(line);
    if (m) return m[1];
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

/** `{relation}`: the materialized view PostgreSQL's message names, schema-qualified when it is the request's. */
function fillHint(hint: string, f: Facts): string {
  if (!hint.includes('{relation}')) return hint;
  const name = /"([^"]+)"/.exec(f.message)?.[1];
  const relation = f.context?.relation;
  const qualified =
    name === undefined ? undefined : relation !== undefined && relation.kind === 'm' && relation.name === name ? `${quoteIdent(relation.schema)}.${quoteIdent(name)}` : quoteIdent(name);
  return hint.replace('{relation}', qualified ?? '<name>');
}

function quoteIdent(name: string): string {
  return /^[a-z_][a-z0-9_$]*$/.test(name) ? name : `"${name.replace(/"/g, '""')}"`;
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
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
