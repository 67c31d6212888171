import type { ErrorCode } from './error-catalogue';

/**
 * SQLSTATE -> gateway code, as data. Exact codes win over class prefixes (the first two
 * characters). Codes are listed in PostgreSQL's Appendix A "PostgreSQL Error Codes".
 * A row is one rule, or a list of rules tried in order: the first whose `when` holds (or that has
 * no `when`) applies; when none does, the class's rules are tried, then the error is unmapped
 * (INTERNAL_ERROR). docs/errors.md lists every row and explains each cause.
 */
export interface SqlstateRule {
  readonly code: ErrorCode;
  /** Message shown to the caller; PostgreSQL's own message is used where it names only data. */
  readonly message?: string;
  /** Only given with the rule; a hint that names a cause belongs on a rule whose `when` makes that cause certain. */
  readonly hint?: string;
  /** Pass PostgreSQL's message through (it names columns/constraints, never SQL text). */
  readonly passMessage?: boolean;
  /** Pass the DETAIL (as `details.detail`) and HINT of a function author's RAISE. */
  readonly passDetail?: boolean;
  /** The rule applies only when this holds (to-gateway-error.ts decides each cause). */
  readonly when?: SqlstateCause;
}

/**
 * What must hold for a rule. "Own statement" means the request's statement itself, not a function or
 * trigger body it ran (an error from those carries a function line in its context).
 * - `in-function`: raised inside a PL/pgSQL, SQL or other function or trigger body;
 * - `http-status`: `PTxyz` whose xyz is a 4xx/5xx HTTP status;
 * - `upsert`: own statement of an insert with ON CONFLICT (`X-Upsert`, `Prefer: resolution`);
 * - `write`: own statement of an insert, update or delete;
 * - `write-to-view`: the same, addressed to a view;
 * - `row-scan`: own statement of a list, aggregate or `_explain` (filters and a limit narrow it);
 * - `json-operator`: own statement, and PostgreSQL's message names the type `json`;
 * - `unpopulated-matview`: a materialized view created or refreshed WITH NO DATA was read;
 * - `non-volatile-write`: a function not declared VOLATILE tried to write;
 * - `value-syntax`: own statement, and PostgreSQL's message names the type `tsvector`, `tsquery` or `jsonpath`
 *   (their input functions report a value that does not parse as a syntax error).
 */
export type SqlstateCause =
  | 'in-function'
  | 'http-status'
  | 'upsert'
  | 'write'
  | 'write-to-view'
  | 'row-scan'
  | 'json-operator'
  | 'unpopulated-matview'
  | 'non-volatile-write'
  | 'value-syntax'
  | 'caller-read'
  | 'text-search-config';

export type SqlstateRow = SqlstateRule | readonly SqlstateRule[];

const SCHEMA_CHANGED = 'The schema changed since discovery; the gateway is re-reading it, retry shortly.';
/** Inside a function body a rule about the request's own table, column or operation would blame the wrong thing. */
const FUNCTION_BODY: SqlstateRule = { when: 'in-function', code: 'FUNCTION_FAILED', passMessage: true };

export const exactSqlstates: Readonly<Record<string, SqlstateRow>> = {
  '23505': { code: 'CONFLICT', passMessage: true }, // unique_violation
  '23503': { code: 'CONFLICT', passMessage: true }, // foreign_key_violation
  '23P01': { code: 'CONFLICT', passMessage: true }, // exclusion_violation
  '23502': { code: 'VALIDATION_ERROR', passMessage: true }, // not_null_violation
  '23514': { code: 'VALIDATION_ERROR', passMessage: true }, // check_violation
  P0001: { code: 'VALIDATION_ERROR', passMessage: true, passDetail: true }, // raise_exception: the function author's message
  '42501': { code: 'FORBIDDEN', passMessage: true }, // insufficient_privilege, also RLS WITH CHECK failures
  '25006': { code: 'FORBIDDEN', message: 'This request may not write: it runs in a read-only transaction.' }, // read_only_sql_transaction
  // "INSERT is not allowed in a non-volatile function": a STABLE/IMMUTABLE function that writes.
  // Otherwise e.g. "cannot insert into column ... of view" (403), or an unsupported feature in a function body.
  '0A000': [
    { when: 'non-volatile-write', code: 'FORBIDDEN', passMessage: true, hint: 'A function that writes must be declared VOLATILE.' },
    FUNCTION_BODY,
    { code: 'FORBIDDEN', passMessage: true },
  ], // feature_not_supported
  // Filters and a limit only narrow a list or an aggregate; a call or a write gets no such hint.
  '57014': [
    { when: 'row-scan', code: 'TIMEOUT', message: 'The query was cancelled: it ran longer than the statement timeout.', hint: 'Narrow the query with filters or a smaller limit.' },
    { code: 'TIMEOUT', message: 'The query was cancelled: it ran longer than the statement timeout.' },
  ], // query_canceled
  '57P01': { code: 'SERVICE_UNAVAILABLE', message: 'The database is shutting down.' }, // admin_shutdown
  '57P02': { code: 'SERVICE_UNAVAILABLE', message: 'The database is restarting.' }, // crash_shutdown
  '57P03': { code: 'SERVICE_UNAVAILABLE', message: 'The database is not accepting connections yet.' }, // cannot_connect_now
  '40001': { code: 'CONFLICT', message: 'The transaction could not be serialized with a concurrent one.', hint: 'Retry the request.' }, // serialization_failure
  '40P01': { code: 'CONFLICT', message: 'The transaction was chosen as a deadlock victim.', hint: 'Retry the request.' }, // deadlock_detected
  // In a function body: the function names a table or column that is not there; re-reading the gateway's schema cannot fix it.
  '42P01': [FUNCTION_BODY, { code: 'NOT_FOUND', message: 'The table is no longer available.', hint: SCHEMA_CHANGED }], // undefined_table
  '42703': [FUNCTION_BODY, { code: 'UNKNOWN_COLUMN', message: 'A column is no longer available.', hint: SCHEMA_CHANGED }], // undefined_column
  '22001': { code: 'VALIDATION_ERROR', passMessage: true }, // string_data_right_truncation
  // E.g. "wrong number of array subscripts": a value, never the gateway's SQL (class 22 says the same; listed for the docs).
  '2202E': { code: 'VALIDATION_ERROR', passMessage: true }, // array_subscript_error
  // "stack depth limit exceeded": an expression too deep for max_stack_depth, e.g. websearch_to_tsquery of a very long phrase.
  '54001': { code: 'PARSE_ERROR', message: 'The request is too complex for the database (stack depth limit exceeded).', hint: 'Use fewer filters or a shorter search.' }, // statement_too_complex
  // The request asked for an operation the column's type lacks (e.g. sort or distinct on json).
  // In a function body: the function calls something that does not exist (a call that no longer resolves is execute's).
  '42883': [
    FUNCTION_BODY,
    { when: 'json-operator', code: 'PARSE_ERROR', message: "The operation is not supported for the column's type.", hint: 'json columns cannot be sorted, compared or made distinct; jsonb can.' },
    { code: 'PARSE_ERROR', message: "The operation is not supported for the column's type." },
  ], // undefined_function
  '42804': [FUNCTION_BODY, { code: 'PARSE_ERROR', message: "The value does not fit the column's type." }], // datatype_mismatch
  // The PostgREST dialect's reads name casts and operators (docs/postgrest-dialect.md): one the column's type lacks is the caller's.
  '42846': [FUNCTION_BODY, { when: 'caller-read', code: 'PARSE_ERROR', message: "The cast is not supported for the column's type." }], // cannot_coerce
  '42725': [FUNCTION_BODY, { when: 'caller-read', code: 'PARSE_ERROR', message: "The operation is ambiguous for the column's type." }], // ambiguous_function
  '42P18': [FUNCTION_BODY, { when: 'caller-read', code: 'PARSE_ERROR', message: "The operation is not supported for the column's type." }], // indeterminate_datatype
  // The input functions of tsvector, tsquery and jsonpath report a value that does not parse as a
  // syntax error: the caller's value. Any other syntax error stays unmapped. Not passed through: a
  // syntax error message may quote SQL text.
  '42601': [FUNCTION_BODY, { when: 'value-syntax', code: 'VALIDATION_ERROR', message: "A value could not be read as the column's type (PostgreSQL reported a syntax error in it)." }], // syntax_error
  // An unknown text search configuration: the PostgREST dialect's `fts(config)`, a caller's value
  // (regconfig's input). Any other undefined object is the function's, or unmapped.
  '42704': [FUNCTION_BODY, { when: 'text-search-config', code: 'VALIDATION_ERROR', passMessage: true }], // undefined_object
  // A batch upsert that proposes the same conflict key twice ("ON CONFLICT DO UPDATE command cannot affect row a second time").
  // Otherwise, e.g. a view or function whose scalar subquery returned several rows: no upsert hint.
  '21000': [
    { when: 'upsert', code: 'CONFLICT', passMessage: true, hint: 'Send each conflict key at most once per batch.' },
    { code: 'CONFLICT', passMessage: true },
  ], // cardinality_violation
  // Writing a GENERATED ALWAYS column; parse refuses these first, so this is the backstop after a schema change.
  '428C9': [FUNCTION_BODY, { code: 'VALIDATION_ERROR', passMessage: true }], // generated_always
  // "materialized view ... has not been populated": readable after a REFRESH, so 503, never 405 ({relation} names it).
  // A write to a view PostgreSQL cannot update automatically ("cannot insert into view ..."): the route exists, the method does not.
  // Any other cause (e.g. currval before nextval) is not known to be either: unmapped outside a function.
  '55000': [
    { when: 'unpopulated-matview', code: 'SERVICE_UNAVAILABLE', passMessage: true, hint: 'Run `REFRESH MATERIALIZED VIEW {relation}`; PostgreSQL refuses to read it until then.' },
    { when: 'write-to-view', code: 'METHOD_NOT_ALLOWED', passMessage: true, hint: 'This relation is not writable; write to its base table.' },
    FUNCTION_BODY,
  ], // object_not_in_prerequisite_state
  // A write to a materialized view ("cannot change materialized view ..."); a read is never 405.
  '42809': [{ when: 'write', code: 'METHOD_NOT_ALLOWED', passMessage: true }, FUNCTION_BODY], // wrong_object_type
  // ON CONFLICT target without a matching unique index; parse checks it first, so only after a schema change.
  // Only an upsert has conflict columns; on a read this SQLSTATE means something else (unmapped).
  '42P10': [FUNCTION_BODY, { when: 'upsert', code: 'PARSE_ERROR', message: 'The conflict columns match no primary key or unique constraint.', hint: SCHEMA_CHANGED }], // invalid_column_reference
};

export const classSqlstates: Readonly<Record<string, SqlstateRow>> = {
  '22': { code: 'VALIDATION_ERROR', passMessage: true }, // data exception: bad literal, out of range, bad encoding
  '23': { code: 'CONFLICT', passMessage: true }, // integrity constraint violation (other)
  '40': { code: 'CONFLICT', message: 'The transaction was rolled back by the database.', hint: 'Retry the request.' }, // transaction rollback
  '08': { code: 'SERVICE_UNAVAILABLE', message: 'The database connection failed.' }, // connection exception
  '53': { code: 'SERVICE_UNAVAILABLE', message: 'The database is out of resources.', hint: 'Retry later.' }, // insufficient resources
  // A value or request over a fixed limit of PostgreSQL: "number of array dimensions (7) exceeds the maximum allowed (6)" (54000),
  // "cannot pass more than 100 arguments to a function" (54023), an index row too large.
  '54': { code: 'VALIDATION_ERROR', passMessage: true }, // program limit exceeded
  '28': { code: 'SERVICE_UNAVAILABLE', message: 'The gateway could not authenticate to the database.' }, // invalid authorization specification
  // Inside a function body: the function's own SQL is broken (e.g. an ambiguous column, RAISE with an unknown condition).
  // Outside one, unmapped: the gateway made a statement PostgreSQL refuses, which is its bug.
  '42': FUNCTION_BODY, // syntax error or access rule violation
  // PL/pgSQL's own: no_data_found, too_many_rows, assert_failure (P0001 is exact above). The function failed, not the gateway.
  P0: { code: 'FUNCTION_FAILED', passMessage: true, passDetail: true }, // PL/pgSQL error
  // RAISE SQLSTATE 'PTxyz': the function chose HTTP status xyz; a PT code that is no 4xx/5xx status is a plain function failure.
  PT: [
    { when: 'http-status', code: 'FUNCTION_STATUS', passMessage: true, passDetail: true },
    { code: 'FUNCTION_FAILED', passMessage: true, passDetail: true },
  ], // PostgREST's convention, not a PostgreSQL class
};

/** The rules to try for a SQLSTATE, in order: its exact row, then its class's row. */
export function rulesForSqlstate(sqlstate: string): readonly SqlstateRule[] {
  return [...rulesOf(exactSqlstates[sqlstate]), ...rulesOf(classSqlstates[sqlstate.slice(0, 2)])];
}

export function rulesOf(row: SqlstateRow | undefined): readonly SqlstateRule[] {
  if (row === undefined) return [];
  return isRuleList(row) ? row : [row];
}

function isRuleList(row: SqlstateRow): row is readonly SqlstateRule[] {
  return Array.isArray(row);
}
