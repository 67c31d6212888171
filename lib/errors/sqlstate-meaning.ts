/**
 * What a SQLSTATE says about a request beyond its gateway code (which sqlstate-map.ts gives):
 * whether one row of a batch caused it, whether the call itself no longer resolves, whether the
 * schema changed since discovery. The SQLSTATEs are listed here as data, beside the map, so that
 * SQLSTATE knowledge has one home (lib/errors/); codes from PostgreSQL's Appendix A "PostgreSQL
 * Error Codes". docs/errors.md describes each consequence.
 * In: an error thrown by node-postgres (its `code` is the SQLSTATE, `where` the function context)
 * or a GatewayError wrapping one as its `cause`. Out: yes or no. Never: maps to a gateway code.
 */

/**
 * A single row's data can cause these: data exceptions (class 22, a bad literal or out-of-range
 * value), integrity violations (class 23), the same upsert key twice (21000) and RLS WITH CHECK
 * (42501). After a batch fails with one of them, the failing row is probed and named.
 */
const ROW_ERROR = { classes: ['22', '23'], codes: ['21000', '42501'] } as const;

/** undefined_function, ambiguous_function: raised for the call itself when it carries no `where`. */
const UNRESOLVED_CALL: readonly string[] = ['42883', '42725'];

/** undefined_table, undefined_column: a name the schema cache knows is gone (a migration ran). */
const SCHEMA_GONE: readonly string[] = ['42P01', '42703'];

/** Gateway codes execute gives an unresolved call (RPC_SIGNATURE_MISMATCH, or NOT_FOUND when the check is off). */
const UNRESOLVED_CALL_CODES: readonly string[] = ['RPC_SIGNATURE_MISMATCH', 'NOT_FOUND'];

function sqlstateOf(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null | undefined)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** A batch insert's error that one row's data may have caused (then worth probing for the row). */
export function isRowError(err: unknown): boolean {
  const code = sqlstateOf(err);
  return code !== undefined && inGroup(ROW_ERROR, code);
}

/**
 * The call itself did not resolve, not a statement inside the function (those carry a `where`
 * context): the function changed since discovery. PostgreSQL parses the whole statement before
 * executing any of it, so nothing ran.
 */
export function isUnresolvedCall(err: unknown): boolean {
  const code = sqlstateOf(err);
  return code !== undefined && UNRESOLVED_CALL.includes(code) && !(err as { where?: unknown }).where;
}

/**
 * A gateway error caused by a table, column or function the schema cache knows being gone: the
 * schema changed since discovery and should be read again. Any 42P01/42703 counts; 42883/42725
 * only for a call that no longer resolves (execute gave it one of UNRESOLVED_CALL_CODES).
 */
export function isSchemaDrift(err: unknown): boolean {
  const cause = (err as { cause?: unknown } | null | undefined)?.cause;
  const sqlstate = sqlstateOf(cause);
  if (sqlstate === undefined) return false;
  if (SCHEMA_GONE.includes(sqlstate)) return true;
  const code = (err as { code?: unknown }).code;
  return isUnresolvedCall(cause) && typeof code === 'string' && UNRESOLVED_CALL_CODES.includes(code);
}

/**
 * After these the server closes the connection, so it is never reused: connection exception
 * (class 08), admin shutdown, crash shutdown, cannot connect now (57P01-57P03). A statement error
 * (a constraint, a bad literal, 57014 statement timeout) leaves the connection usable.
 */
const CONNECTION_LOST = { classes: ['08'], codes: ['57P01', '57P02', '57P03'] } as const;

/**
 * A server refusing a session sends these: connection exception (08), invalid authorization (28),
 * unknown database (3D000), too many connections (53300), starting up or shutting down (57P01-57P03).
 */
const LOGIN_REFUSED = { classes: ['08', '28'], codes: ['3D000', '53300', '57P01', '57P02', '57P03'] } as const;

function inGroup(group: { readonly classes: readonly string[]; readonly codes: readonly string[] }, sqlstate: string): boolean {
  return group.classes.includes(sqlstate.slice(0, 2)) || group.codes.includes(sqlstate);
}

/** A SQLSTATE after which the connection cannot be trusted (lib/db/check-out.ts adds FATAL/PANIC and socket errors). */
export function isConnectionLostSqlstate(sqlstate: string): boolean {
  return inGroup(CONNECTION_LOST, sqlstate);
}

/** A SQLSTATE with which a server refuses a new session (the database is unreachable for the gateway). */
export function isLoginRefusal(sqlstate: string): boolean {
  return inGroup(LOGIN_REFUSED, sqlstate);
}
