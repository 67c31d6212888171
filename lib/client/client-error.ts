/**
 * The error a client call resolves with when the gateway answers non-2xx (its JSON error body:
 * code, message, details, hint; docs/errors.md) or when no answer arrives (docs/client.md,
 * "Errors"). In: an HTTP status and a body, or a transport failure. Out: a typed error object.
 * Never: imports server code (the catalogue's codes are repeated below; a unit test keeps them equal).
 */

/** The gateway's stable error codes (docs/errors.md, "Codes"). */
export const gatewayErrorCodes = [
  'PARSE_ERROR',
  'UNKNOWN_COLUMN',
  'UNKNOWN_RELATION',
  'VALIDATION_ERROR',
  'RPC_NAME_NOT_QUALIFIED',
  'BATCH_REFERENCE_INVALID',
  'RPC_SIGNATURE_MISMATCH',
  'UNAUTHORIZED',
  'FORBIDDEN',
  'QUERY_NOT_ALLOWED',
  'RPC_NOT_ALLOWED',
  'NOT_FOUND',
  'METHOD_NOT_ALLOWED',
  'NOT_ACCEPTABLE',
  'CONFLICT',
  'PAYLOAD_TOO_LARGE',
  'RESPONSE_TOO_LARGE',
  'UNSUPPORTED_MEDIA_TYPE',
  'RATE_LIMITED',
  'INTERNAL_ERROR',
  'FUNCTION_FAILED',
  'SERVICE_UNAVAILABLE',
  'TIMEOUT',
  'FUNCTION_STATUS',
] as const;

export type GatewayErrorCode = (typeof gatewayErrorCodes)[number];

/**
 * Codes the client makes itself, never sent by the gateway: the request did not get an answer
 * (`NETWORK_ERROR`), or the answer was not the gateway's JSON (`UNEXPECTED_RESPONSE`, e.g. a proxy's
 * HTML 502 or Node's bodiless 431).
 */
export const clientOnlyErrorCodes = ['NETWORK_ERROR', 'UNEXPECTED_RESPONSE'] as const;

export type ClientErrorCode = GatewayErrorCode | (typeof clientOnlyErrorCodes)[number];

/** The gateway's error body, as it is sent. */
export interface GatewayErrorBody {
  readonly code: GatewayErrorCode;
  readonly message: string;
  readonly details?: unknown;
  readonly hint?: string;
}

// A registry symbol, so that the ESM and the CommonJS build of the client recognise each other's errors.
const brand = Symbol.for('tablegate.client.error');

export class TablegateClientError extends Error {
  override readonly name = 'TablegateClientError';
  readonly code: ClientErrorCode;
  readonly details: unknown;
  readonly hint: string | undefined;
  /** HTTP status of the answer; 0 when none arrived. */
  readonly status: number;
  /** The answer's `X-Request-Id` (the gateway logs it with the error). */
  readonly requestId: string | undefined;

  constructor(init: { code: ClientErrorCode; message: string; status: number; details?: unknown; hint?: string; requestId?: string; cause?: unknown }) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.code = init.code;
    this.details = init.details;
    this.hint = init.hint;
    this.status = init.status;
    this.requestId = init.requestId;
    Object.defineProperty(this, brand, { value: true });
  }

  /** The body the gateway sent (code, message, and details / hint when present). */
  toJSON(): { code: ClientErrorCode; message: string; details?: unknown; hint?: string } {
    return {
      code: this.code,
      message: this.message,
      ...(this.details === undefined ? {} : { details: this.details }),
      ...(this.hint === undefined ? {} : { hint: this.hint }),
    };
  }
}

/** True for a TablegateClientError of either build (ESM or CommonJS) of the client. */
export function isTablegateClientError(value: unknown): value is TablegateClientError {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[brand] === true;
}
