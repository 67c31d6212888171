/**
 * Any error -> PostgREST's error response: status and body `{code, message, details, hint}`
 * (docs/postgrest-dialect.md, "Errors"). In: a GatewayError (a PostgrestError shows its own PGRST
 * code; one from the database its SQLSTATE, with PostgREST's status for it; any other its
 * nearest PostgREST code) and whether the caller is anonymous (42501 is 401 then, as PostgREST).
 * Out: status and body. Never: shows what GatewayError would not (SQL text, stacks, secrets).
 */
import type { GatewayError } from '../../../errors/gateway-error';
import type { ErrorCode } from '../../../errors/error-catalogue';
import { isPostgrestError, RaisedPostgrestError } from '../postgrest-error';

export interface PostgrestErrorBody {
  readonly status: number;
  /** PostgREST 12's 404 for a path that is not a route is an empty object. */
  readonly body: { code: string; message: string; details: string | readonly Record<string, string>[] | null; hint: string | null } | Record<string, never>;
  /** Headers in place of the error's own (an expired token's WWW-Authenticate). */
  readonly headers?: Record<string, string>;
}

/** The PostgREST version whose wording the dialect answers in (`postgrest_version`). */
export type PostgrestVersion = 12 | 13;

/** Catalogue codes without a SQLSTATE -> PostgREST's code and status for the same case. */
const byCode: Record<ErrorCode, { code: string; status: number | null }> = {
  PARSE_ERROR: { code: 'PGRST100', status: 400 },
  UNKNOWN_COLUMN: { code: '42703', status: 400 },
  UNKNOWN_RELATION: { code: 'PGRST200', status: 400 },
  VALIDATION_ERROR: { code: 'PGRST100', status: 400 },
  RPC_NAME_NOT_QUALIFIED: { code: 'PGRST202', status: 404 },
  RPC_SIGNATURE_MISMATCH: { code: 'PGRST202', status: 404 },
  // The PostgREST door has no batches; listed so that every code has a PostgREST form.
  BATCH_REFERENCE_INVALID: { code: 'PGRST100', status: 400 },
  UNAUTHORIZED: { code: 'PGRST301', status: 401 },
  FORBIDDEN: { code: '42501', status: 403 },
  QUERY_NOT_ALLOWED: { code: '42501', status: 403 },
  RPC_NOT_ALLOWED: { code: '42501', status: 403 },
  NOT_FOUND: { code: 'PGRST125', status: 404 },
  METHOD_NOT_ALLOWED: { code: 'PGRST117', status: 405 },
  NOT_ACCEPTABLE: { code: 'PGRST107', status: 406 },
  CONFLICT: { code: '23505', status: 409 },
  PAYLOAD_TOO_LARGE: { code: 'PGRST102', status: 413 },
  RESPONSE_TOO_LARGE: { code: 'PGRSTX01', status: 400 },
  UNSUPPORTED_MEDIA_TYPE: { code: 'PGRST107', status: 415 },
  RATE_LIMITED: { code: 'PGRST429', status: 429 },
  INTERNAL_ERROR: { code: 'PGRSTX00', status: 500 },
  FUNCTION_FAILED: { code: 'P0000', status: 500 },
  SERVICE_UNAVAILABLE: { code: 'PGRST000', status: 503 },
  TIMEOUT: { code: '57014', status: 504 },
  FUNCTION_STATUS: { code: 'PGRST000', status: null },
};

export function postgrestErrorBody(error: GatewayError, anonymous: boolean, version: PostgrestVersion = 13): PostgrestErrorBody {
  // An expired token is told apart, as PostgREST does: clients refresh their session on it.
  // Only after the signature verified is `exp` checked, so it says nothing about a forged token.
  if (error.code === 'UNAUTHORIZED' && error.reason === 'expired') {
    return {
      status: 401,
      body: { code: version === 12 ? 'PGRST301' : 'PGRST303', message: 'JWT expired', details: null, hint: null },
      headers: { 'WWW-Authenticate': 'Bearer error="invalid_token", error_description="JWT expired"' },
    };
  }
  const hint = error.hint ?? null;
  if (error instanceof RaisedPostgrestError) return { status: error.pgrstStatus, body: { ...error.body, code: error.body.code ?? '', message: error.body.message ?? '' } };
  if (isPostgrestError(error)) {
    if (version === 12 && error.pgrstCode === 'PGRST125') return { status: 404, body: {} };
    const worded = version === 12 && error.wording12 ? error.wording12 : { message: error.message, hint };
    // A list (PGRST201's candidates) stays a JSON array, as PostgREST sends it; anything else is text.
    const details = Array.isArray(error.details) ? (error.details as Record<string, string>[]) : detailsText(error.details);
    return { status: error.pgrstStatus, body: { code: error.pgrstCode, message: worded.message, details, hint: worded.hint } };
  }
  const details = (typeof error.details === 'object' && error.details !== null ? error.details : {}) as Record<string, unknown>;
  const sqlstate = typeof details['sqlstate'] === 'string' ? details['sqlstate'] : undefined;
  if (sqlstate !== undefined) {
    // PostgreSQL's own detail text when the gateway passes it on; else the gateway's details.
    const detail = typeof details['detail'] === 'string' ? details['detail'] : detailsText(withoutSqlstate(details));
    const status = error.code === 'FUNCTION_STATUS' ? error.status : sqlstateStatus(sqlstate, anonymous);
    // A function's own RAISE: its message exactly as written, as PostgREST sends it.
    const raw = (error.cause as { message?: unknown } | undefined)?.message;
    const message = /^P[0T]/.test(sqlstate) && typeof raw === 'string' ? raw : error.message;
    return { status, body: { code: sqlstate, message, details: detail, hint } };
  }
  const mapped = byCode[error.code];
  if (version === 12 && mapped.code === 'PGRST125') return { status: 404, body: {} };
  return { status: mapped.status ?? error.status, body: { code: mapped.code, message: error.message, details: detailsText(error.details), hint } };
}

function withoutSqlstate(details: Record<string, unknown>): Record<string, unknown> | undefined {
  const rest = Object.fromEntries(Object.entries(details).filter(([k]) => k !== 'sqlstate'));
  return Object.keys(rest).length ? rest : undefined;
}

/** PostgREST's `details` is text: the gateway's structured details are sent as their JSON. */
function detailsText(details: unknown): string | null {
  if (details === undefined || details === null) return null;
  return typeof details === 'string' ? details : JSON.stringify(details);
}

/**
 * PostgREST's status for a SQLSTATE (its documentation, "HTTP Status Codes"), but a program limit
 * (class 54: arrays nested deeper than 6 levels, too many arguments or columns) is 400: the
 * request's own value or statement went over it, not the server (docs/postgrest-dialect.md, "Errors").
 */
export function sqlstateStatus(code: string, anonymous: boolean): number {
  if (/^PT\d{3}$/.test(code)) return Number(code.slice(2));
  const exact: Record<string, number> = { '23503': 409, '23505': 409, '25006': 405, '53400': 500, P0001: 400, '42883': 404, '42P01': 404, '42P17': 500 };
  if (exact[code] !== undefined) return exact[code];
  if (code === '42501') return anonymous ? 401 : 403;
  const prefix: Record<string, number> = {
    '08': 503, '09': 500, '0L': 403, '0P': 403, '25': 500, '28': 403, '2D': 500, '38': 500, '39': 500, '3B': 500, '40': 500,
    '53': 503, '54': 400, '55': 500, '57': 500, '58': 500, F0: 500, HV: 500, P0: 500, XX: 500,
  };
  return prefix[code.slice(0, 2)] ?? 400;
}
