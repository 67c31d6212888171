import type { ErrorCode } from './error-catalogue';

/**
 * SQLSTATE -> gateway code, as data. Exact codes win over class prefixes (the first two
 * characters). Codes are listed in PostgreSQL's Appendix A "PostgreSQL Error Codes".
 */
interface SqlstateRule {
  readonly code: ErrorCode;
  /** Message shown to the caller; PostgreSQL's own message is used where it names only data. */
  readonly message?: string;
  readonly hint?: string;
  /** Pass PostgreSQL's message through (it names columns/constraints, never SQL text). */
  readonly passMessage?: boolean;
}

export const exactSqlstates: Readonly<Record<string, SqlstateRule>> = {
  '23505': { code: 'CONFLICT', passMessage: true }, // unique_violation
  '23503': { code: 'CONFLICT', passMessage: true }, // foreign_key_violation
  '23P01': { code: 'CONFLICT', passMessage: true }, // exclusion_violation
  '23502': { code: 'VALIDATION_ERROR', passMessage: true }, // not_null_violation
  '23514': { code: 'VALIDATION_ERROR', passMessage: true }, // check_violation
  P0001: { code: 'VALIDATION_ERROR', passMessage: true }, // raise_exception: the function author's message
  '42501': { code: 'FORBIDDEN', passMessage: true }, // insufficient_privilege, also RLS WITH CHECK failures
  '25006': { code: 'FORBIDDEN', message: 'This request may not write: it runs in a read-only transaction.' }, // read_only_sql_transaction
  // E.g. "INSERT is not allowed in a non-volatile function": a STABLE/IMMUTABLE function that writes.
  '0A000': { code: 'FORBIDDEN', passMessage: true, hint: 'A function that writes must be declared VOLATILE.' }, // feature_not_supported
  '57014': { code: 'TIMEOUT', message: 'The query was cancelled: it ran longer than the statement timeout.', hint: 'Narrow the query with filters or a smaller limit.' }, // query_canceled
  '57P01': { code: 'SERVICE_UNAVAILABLE', message: 'The database is shutting down.' }, // admin_shutdown
  '57P02': { code: 'SERVICE_UNAVAILABLE', message: 'The database is restarting.' }, // crash_shutdown
  '57P03': { code: 'SERVICE_UNAVAILABLE', message: 'The database is not accepting connections yet.' }, // cannot_connect_now
  '40001': { code: 'CONFLICT', message: 'The transaction could not be serialized with a concurrent one.', hint: 'Retry the request.' }, // serialization_failure
  '40P01': { code: 'CONFLICT', message: 'The transaction was chosen as a deadlock victim.', hint: 'Retry the request.' }, // deadlock_detected
  '42P01': { code: 'NOT_FOUND', message: 'The table is no longer available.', hint: 'The schema changed since discovery; the gateway is re-reading it, retry shortly.' }, // undefined_table
  '42703': { code: 'UNKNOWN_COLUMN', message: 'A column is no longer available.', hint: 'The schema changed since discovery; the gateway is re-reading it, retry shortly.' }, // undefined_column
  '22001': { code: 'VALIDATION_ERROR', passMessage: true }, // string_data_right_truncation
  // The request asked for an operation the column's type lacks (e.g. sort or distinct on json).
  '42883': { code: 'PARSE_ERROR', message: "The operation is not supported for the column's type.", hint: 'json columns cannot be sorted, compared or made distinct (jsonb can); ranges have no min or max, money has no avg.' }, // undefined_function
  // The input functions of tsvector, tsquery and jsonpath report a value that does not parse as a
  // syntax error. The gateway's own SQL is made from fixed templates, so this is the caller's value.
  // Not passed through: a syntax error message may quote SQL text.
  '42601': { code: 'VALIDATION_ERROR', message: "A value could not be read as the column's type (PostgreSQL reported a syntax error in it)." }, // syntax_error
  '42804': { code: 'PARSE_ERROR', message: "The value does not fit the column's type." }, // datatype_mismatch
  // A batch upsert that proposes the same conflict key twice ("ON CONFLICT DO UPDATE command cannot affect row a second time").
  '21000': { code: 'CONFLICT', passMessage: true, hint: 'Send each conflict key at most once per batch.' }, // cardinality_violation
  // Writing a GENERATED ALWAYS column; parse refuses these first, so this is the backstop after a schema change.
  '428C9': { code: 'VALIDATION_ERROR', passMessage: true }, // generated_always
  // ON CONFLICT target without a matching unique index; parse checks it first, so only after a schema change.
  // A write to a view PostgreSQL cannot update automatically ("cannot insert into view ..."): the route exists, the method does not.
  '55000': { code: 'METHOD_NOT_ALLOWED', passMessage: true, hint: 'This relation is not writable; write to its base table.' }, // object_not_in_prerequisite_state
  // A write to a materialized view ("cannot change materialized view ...").
  '42809': { code: 'METHOD_NOT_ALLOWED', passMessage: true }, // wrong_object_type
  '42P10': { code: 'PARSE_ERROR', message: 'The conflict columns match no primary key or unique constraint.', hint: 'The schema changed since discovery; the gateway is re-reading it, retry shortly.' }, // invalid_column_reference
};

export const classSqlstates: Readonly<Record<string, SqlstateRule>> = {
  '22': { code: 'VALIDATION_ERROR', passMessage: true }, // data exception: bad literal, out of range, bad encoding
  '23': { code: 'CONFLICT', passMessage: true }, // integrity constraint violation (other)
  '40': { code: 'CONFLICT', message: 'The transaction was rolled back by the database.', hint: 'Retry the request.' }, // transaction rollback
  '08': { code: 'SERVICE_UNAVAILABLE', message: 'The database connection failed.' }, // connection exception
  '53': { code: 'SERVICE_UNAVAILABLE', message: 'The database is out of resources.', hint: 'Retry later.' }, // insufficient resources
  '28': { code: 'SERVICE_UNAVAILABLE', message: 'The gateway could not authenticate to the database.' }, // invalid authorization specification
};

export function ruleForSqlstate(sqlstate: string): SqlstateRule | undefined {
  return exactSqlstates[sqlstate] ?? classSqlstates[sqlstate.slice(0, 2)];
}
