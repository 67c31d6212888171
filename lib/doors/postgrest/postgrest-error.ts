/**
 * An error of the PostgREST dialect that has a PostgREST code of its own (PGRST100, PGRST116, ...,
 * docs/postgrest-dialect.md, "Errors"). It is a GatewayError of the nearest catalogue code, so the
 * default error body, logs and metrics treat it like any other; the dialect's error rendering
 * shows `pgrstCode` and `pgrstStatus` instead. Its message, details and hint are shown to the
 * caller as they are: never SQL text, stack traces or secrets.
 */
import type { ErrorCode } from '../../errors/error-catalogue';
import { GatewayError } from '../../errors/gateway-error';
import type { NameHint } from '../../errors/name-hint';

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
  PGRST126: { status: 404, code: 'NOT_FOUND', when: 'GET / when the OpenAPI document route does not answer it (a fallback: lib/create-describe-route.ts answers first)' },
  PGRST121: { status: 500, code: 'INTERNAL_ERROR', when: "a function raised SQLSTATE 'PGRST' whose message or detail is not the JSON PostgREST reads" },
  PGRST127: { status: 400, code: 'PARSE_ERROR', when: 'a feature the dialect does not implement (named in details)' },
  PGRST105: { status: 405, code: 'PARSE_ERROR', when: 'PUT whose filters are not exactly the primary key with eq' },
  PGRST115: { status: 400, code: 'PARSE_ERROR', when: 'PUT whose body does not carry the primary key values of the URL' },
  PGRST124: { status: 400, code: 'PARSE_ERROR', when: 'more rows affected than Prefer: max-affected (with handling=strict); rolled back' },
  // pg-safeupdate's error, which Supabase answers for an UPDATE / DELETE without a filter.
  '21000': { status: 400, code: 'PARSE_ERROR', when: 'PATCH or DELETE without a filter while postgrest_unfiltered_writes = false' },
  // PostGIS's error for ST_AsGeoJSON(record) without a geometry column, which PostgREST passes on.
  '22023': { status: 400, code: 'PARSE_ERROR', when: 'Accept: application/geo+json and no selected top-level column is a PostGIS geometry or geography' },
  PGRST200: { status: 400, code: 'UNKNOWN_RELATION', when: 'no relationship between the tables for an embed' },
  PGRST201: { status: 300, code: 'UNKNOWN_RELATION', when: 'several relationships: disambiguate with !hint' },
  PGRST202: { status: 404, code: 'NOT_FOUND', when: 'unknown function' },
  PGRST203: { status: 300, code: 'RPC_SIGNATURE_MISMATCH', when: 'a call several overloads fit equally' },
  PGRST204: { status: 400, code: 'UNKNOWN_COLUMN', when: 'unknown column in columns= or a body' },
  PGRST205: { status: 404, code: 'NOT_FOUND', when: 'unknown table or view' },
  // PostgREST 12 answered an unknown table with PostgreSQL's code (PGRST205 is 13's).
  '42P01': { status: 404, code: 'NOT_FOUND', when: 'unknown table or view, with postgrest_version = 12' },
} as const satisfies Record<string, { status: number; code: ErrorCode; when: string }>;

export type PostgrestCode = keyof typeof postgrestCodes;

/** How PostgREST 12 worded an error where 13 words it otherwise (docs/postgrest-dialect.md, "PostgREST 12 and 13"). */
export interface Wording {
  readonly message: string;
  readonly hint: string | null;
}

export class PostgrestError extends GatewayError {
  readonly pgrstCode: PostgrestCode;
  readonly pgrstStatus: number;
  /** The message and hint with `postgrest_version = 12`, when they differ from 13's (the message given). */
  readonly wording12: Wording | undefined;

  /** `status`: where PostgREST sends one code with two statuses (PGRST107: 406 for Accept, 415 for Content-Type). */
  constructor(code: PostgrestCode, message: string, options: { details?: string | readonly Record<string, string>[]; hint?: string; headers?: Record<string, string>; status?: number; names?: NameHint; wording12?: Wording } = {}) {
    const { status, wording12, ...rest } = options;
    super(postgrestCodes[code].code, message, rest);
    this.name = 'PostgrestError';
    this.pgrstCode = code;
    this.pgrstStatus = status ?? postgrestCodes[code].status;
    this.wording12 = wording12 ?? versionOneWording[code];
  }
}

/** Messages PostgREST 12 words otherwise whatever the request (its src/PostgREST/Error.hs). */
const versionOneWording: Partial<Record<PostgrestCode, Wording>> = {
  PGRST116: { message: 'JSON object requested, multiple (or no) rows returned', hint: null },
};

export function isPostgrestError(value: unknown): value is PostgrestError {
  return value instanceof PostgrestError;
}

/**
 * A function's `RAISE SQLSTATE 'PGRST' USING message = '{"code", "message", "details", "hint"}',
 * detail = '{"status", "headers"}'`: PostgREST's way for SQL to choose the response's status,
 * headers and error body (docs/postgrest-dialect.md, "Errors raised by functions").
 */
export class RaisedPostgrestError extends GatewayError {
  constructor(
    readonly pgrstStatus: number,
    readonly body: { readonly code: string | null; readonly message: string | null; readonly details: string | null; readonly hint: string | null },
    headers: Record<string, string>,
    cause: unknown,
  ) {
    super('FUNCTION_STATUS', body.message ?? 'Raised by a function', { headers, status: pgrstStatus, cause });
    this.name = 'RaisedPostgrestError';
  }
}

/**
 * Headers a function may not set (RFC 9110 §7.6.1 hop-by-hop, and the message framing of RFC 9112
 * §6): with them the response could carry both Transfer-Encoding and Content-Length, which clients
 * reject, or speak for the connection rather than the message.
 */
const unsettableHeader = /^(?:transfer-encoding|content-length|connection|keep-alive|upgrade|te|trailer|proxy-.*)$/i;

/** The PostgreSQL error of a `RAISE SQLSTATE 'PGRST'` -> its response; undefined for any other error; PGRST121 when its JSON is not usable. */
export function raisedPostgrestError(err: unknown): GatewayError | undefined {
  const e = (err ?? {}) as { code?: unknown; message?: unknown; detail?: unknown };
  if (e.code !== 'PGRST') return undefined;
  const invalid = (why: string) => new PostgrestError('PGRST121', "Could not parse JSON in the RAISE SQLSTATE 'PGRST' error", { details: why, hint: 'The message is {"code", "message", "details", "hint"} and the detail {"status", "headers"}, both JSON objects.' });
  // The JSON is read, but it asks for a response the gateway cannot send: the function answered
  // badly, as an upstream would (502, docs/postgrest-dialect.md, "Errors raised by functions").
  const unsendable = (why: string) => new PostgrestError('PGRST121', "The RAISE SQLSTATE 'PGRST' error asks for a response the gateway cannot send", { details: why, hint: 'The status is 400-599; the headers are end-to-end headers, not hop-by-hop or framing ones.', status: 502 });
  const parse = (text: unknown): Record<string, unknown> | undefined => {
    if (typeof text !== 'string') return undefined;
    try {
      const v: unknown = JSON.parse(text);
      return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
    } catch {
      return undefined;
    }
  };
  const message = parse(e.message);
  const detail = parse(e.detail);
  if (!message) return invalid('The message is not a JSON object.');
  if (!detail) return invalid('The detail is not a JSON object.');
  const status = detail['status'];
  if (typeof status !== 'number' || !Number.isInteger(status)) return invalid('The detail has no integer status.');
  // An error response carries a body: 1xx, 2xx (204 among them) and 3xx (304) cannot be one.
  if (status < 400 || status > 599) return unsendable(`The status ${status} is not an error status (400-599).`);
  const headers: Record<string, string> = {};
  const rawHeaders = detail['headers'] ?? {};
  if (typeof rawHeaders !== 'object' || rawHeaders === null || Array.isArray(rawHeaders)) return invalid('The headers are not a JSON object.');
  for (const [name, value] of Object.entries(rawHeaders)) {
    // Only well-formed header names and values; never one that could split the response.
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,64}$/.test(name) || typeof value !== 'string' || /[\r\n\0]/.test(value) || value.length > 4096) return invalid(`The header ${name.slice(0, 64)} is not a valid header.`);
    if (unsettableHeader.test(name)) return unsendable(`The header ${name} is a hop-by-hop or framing header, which the gateway sets itself.`);
    headers[name] = value;
  }
  const text = (k: string): string | null => (typeof message[k] === 'string' ? (message[k] as string) : message[k] === undefined || message[k] === null ? null : JSON.stringify(message[k]));
  return new RaisedPostgrestError(status, { code: text('code'), message: text('message'), details: text('details'), hint: text('hint') }, headers, err);
}

/**
 * geo+json with no selected top-level geometry / geography column (none selected, or PostGIS not
 * installed): PostGIS's ST_AsGeoJSON(record) error, which PostgREST answers (docs/postgrest-dialect.md, "GeoJSON").
 */
export function geometryMissing(): PostgrestError {
  return new PostgrestError('22023', 'geometry column is missing', { details: 'application/geo+json needs a selected top-level column of type geometry or geography (PostGIS).' });
}
