/**
 * The stable error codes (docs/errors.md, "Codes"), one HTTP status each. Codes are part of the public
 * API: never rename one, only add. `docs/errors.md` lists the same table; a unit test keeps
 * the two in sync.
 */
export const errorCatalogue = {
  PARSE_ERROR: { status: 400, when: 'malformed query parameter, operator, sort, limit, cursor, header or JSON body' },
  UNKNOWN_COLUMN: { status: 400, when: 'a column not in the table (hint: nearest name) in select/filter/sort/body/returning' },
  UNKNOWN_RELATION: { status: 400, when: '`expand` (or a `sort` entry past its first relation) names no foreign-key relation of the table' },
  VALIDATION_ERROR: { status: 400, when: 'value rejected by PostgreSQL: bad literal or out of range (class 22), not-null (23502), check (23514), `RAISE EXCEPTION` in a function (P0001)' },
  RPC_NAME_NOT_QUALIFIED: { status: 400, when: 'unqualified function name while `rpc_require_schema_qualified`' },
  BATCH_REFERENCE_INVALID: { status: 400, when: 'a `{"$ref": ...}` in a batch operation names no earlier operation, or no value in its answer' },
  RPC_SIGNATURE_MISMATCH: { status: 400, when: 'unknown named argument / no matching overload while `rpc_signature_check`' },
  UNAUTHORIZED: { status: 401, when: 'no credentials (when `require_auth`), invalid/expired token, admin endpoints without the admin token' },
  FORBIDDEN: { status: 403, when: 'access policy denial (before SQL), RLS violation, insufficient privilege (42501)' },
  QUERY_NOT_ALLOWED: { status: 403, when: 'query pattern not in the allow-list' },
  RPC_NOT_ALLOWED: { status: 403, when: 'function not in the function allow-list' },
  NOT_FOUND: { status: 404, when: 'unknown table or function, invisible row, unknown route' },
  METHOD_NOT_ALLOWED: { status: 405, when: 'a method the route does not support, e.g. PATCH on a collection' },
  NOT_ACCEPTABLE: { status: 406, when: '`Accept` asks for an export format (NDJSON, CSV) on a route that has none, or while exports are off (`max_export_rows = 0`)' },
  CONFLICT: { status: 409, when: 'unique (23505), foreign-key (23503) or exclusion (23P01) violation; serialization failure or deadlock (class 40)' },
  PAYLOAD_TOO_LARGE: { status: 413, when: 'body over `max_request_body_bytes`, batch over `max_batch_size`, `POST /_batch` over `max_batch_operations` or `max_batch_body_bytes`' },
  RESPONSE_TOO_LARGE: { status: 400, when: 'the response body would be larger than `max_response_bytes` (a page, a row, a function result or a write representation); ask for less or use an export' },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, when: 'write body that is not `application/json`' },
  RATE_LIMITED: { status: 429, when: 'more requests than `rate_limit` allows for this caller and route kind in the window (`Retry-After`)' },
  INTERNAL_ERROR: { status: 500, when: 'anything else; `details.request_id` matches the log line' },
  FUNCTION_FAILED: { status: 500, when: 'a function or trigger failed in its own body: class P0 other than P0001 (e.g. P0002, P0004), a PT code that is no HTTP error status, or its own SQL names a missing table, column or function' },
  SERVICE_UNAVAILABLE: { status: 503, when: 'database unreachable (08xxx, 57P01-57P03), out of resources (53xxx), pool exhausted' },
  TIMEOUT: { status: 504, when: 'statement timeout (57014)' },
  // The one code without a fixed status: a function chose it with `RAISE SQLSTATE 'PTxyz'`.
  FUNCTION_STATUS: { status: '4xx/5xx', when: "`RAISE SQLSTATE 'PTxyz'` in a function: HTTP status xyz with the function's message" },
} as const satisfies Record<string, { status: number | '4xx/5xx'; when: string }>;

export type ErrorCode = keyof typeof errorCatalogue;

/** The code's status, or undefined for FUNCTION_STATUS, whose status the function chose. */
export function statusOf(code: ErrorCode): number | undefined {
  const status = errorCatalogue[code].status;
  return typeof status === 'number' ? status : undefined;
}
