/**
 * An error of the PostgREST dialect that has a PostgREST code of its own (PGRST100, PGRST116, ...,
 * docs/postgrest-dialect.md, "Errors"). It is a GatewayError of the nearest catalogue code, so the
 * default error body, logs and metrics treat it like any other; the dialect's error rendering
 * shows `pgrstCode` and `pgrstStatus` instead. Its message, details and hint are shown to the
 * caller as they are: never SQL text, stack traces or secrets.
 */
import type { ErrorCode } from './error-catalogue';
import { GatewayError } from './gateway-error';

/** The PostgREST codes the dialect sends itself, with their HTTP status and the nearest catalogue code. */
export const postgrestCodes = {
  PGRST100: { status: 400, code: 'PARSE_ERROR', when: 'malformed query string: select, filter, order, limit, offset' },
  PGRST102: { status: 400, code: 'PARSE_ERROR', when: 'malformed request body' },
  PGRST103: { status: 416, code: 'PARSE_ERROR', when: 'unsatisfiable Range / offset' },
  PGRST106: { status: 406, code: 'NOT_FOUND', when: 'Accept-Profile / Content-Profile names a schema that is not exposed' },
  PGRST107: { status: 415, code: 'UNSUPPORTED_MEDIA_TYPE', when: 'a media type in Accept or Content-Type that is not served' },
  PGRST108: { status: 400, code: 'PARSE_ERROR', when: 'a filter, order or limit on an embedded resource that is not in select' },
  PGRST116: { status: 406, code: 'PARSE_ERROR', when: 'application/vnd.pgrst.object+json and not exactly one row' },
  PGRST117: { status: 405, code: 'METHOD_NOT_ALLOWED', when: 'an HTTP method the route does not serve' },
  PGRST118: { status: 400, code: 'PARSE_ERROR', when: 'order by an embedded resource that is not to-one' },
  PGRST119: { status: 400, code: 'PARSE_ERROR', when: 'spread of a to-many relationship with postgrest_version = 12' },
  PGRST122: { status: 400, code: 'PARSE_ERROR', when: 'an invalid preference with Prefer: handling=strict' },
  PGRST123: { status: 400, code: 'PARSE_ERROR', when: 'aggregate functions while postgrest_aggregates = false' },
  PGRST125: { status: 404, code: 'NOT_FOUND', when: 'a path that is not a route' },
  PGRST126: { status: 404, code: 'NOT_FOUND', when: 'GET / (the OpenAPI document is not served yet)' },
  PGRST127: { status: 400, code: 'PARSE_ERROR', when: 'a feature the dialect does not implement (named in details)' },
  PGRST200: { status: 400, code: 'UNKNOWN_RELATION', when: 'no relationship between the tables for an embed' },
  PGRST201: { status: 300, code: 'UNKNOWN_RELATION', when: 'several relationships: disambiguate with !hint' },
  PGRST202: { status: 404, code: 'NOT_FOUND', when: 'unknown function' },
  PGRST204: { status: 400, code: 'UNKNOWN_COLUMN', when: 'unknown column in columns= or a body' },
  PGRST205: { status: 404, code: 'NOT_FOUND', when: 'unknown table or view' },
  // PostgREST 12 answered an unknown table with PostgreSQL's code (PGRST205 is 13's).
  '42P01': { status: 404, code: 'NOT_FOUND', when: 'unknown table or view, with postgrest_version = 12' },
} as const satisfies Record<string, { status: number; code: ErrorCode; when: string }>;

export type PostgrestCode = keyof typeof postgrestCodes;

export class PostgrestError extends GatewayError {
  readonly pgrstCode: PostgrestCode;
  readonly pgrstStatus: number;

  /** `status`: where PostgREST sends one code with two statuses (PGRST107: 406 for Accept, 415 for Content-Type). */
  constructor(code: PostgrestCode, message: string, options: { details?: string; hint?: string; headers?: Record<string, string>; status?: number } = {}) {
    const { status, ...rest } = options;
    super(postgrestCodes[code].code, message, rest);
    this.name = 'PostgrestError';
    this.pgrstCode = code;
    this.pgrstStatus = status ?? postgrestCodes[code].status;
  }
}

export function isPostgrestError(value: unknown): value is PostgrestError {
  return value instanceof PostgrestError;
}
