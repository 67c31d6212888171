import { type ErrorCode, statusOf } from './error-catalogue';

/**
 * The one error type every stage throws. Its message, details and hint are shown to the
 * caller as they are, so they must never carry SQL text, stack traces or secrets.
 */
export class GatewayError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly details: unknown;
  readonly hint: string | undefined;
  /** Extra response headers (`WWW-Authenticate`, `Retry-After`). */
  readonly headers: Readonly<Record<string, string>>;

  constructor(
    code: ErrorCode,
    message: string,
    options: { details?: unknown; hint?: string; headers?: Record<string, string>; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'GatewayError';
    this.code = code;
    this.status = statusOf(code);
    this.details = options.details;
    this.hint = options.hint;
    this.headers = Object.freeze({ ...(options.headers ?? {}) });
  }

  /** The contract §4 body. */
  toJSON(): { code: ErrorCode; message: string; details?: unknown; hint?: string } {
    const body: { code: ErrorCode; message: string; details?: unknown; hint?: string } = { code: this.code, message: this.message };
    if (this.details !== undefined) body.details = this.details;
    if (this.hint !== undefined) body.hint = this.hint;
    return body;
  }
}

export function isGatewayError(value: unknown): value is GatewayError {
  return value instanceof GatewayError;
}
