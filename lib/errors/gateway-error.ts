import { type ErrorCode, statusOf } from './error-catalogue';
import { functionStatus } from './function-status';
import type { NameHint, NameVisibility } from './name-hint';

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
  /** One word from a fixed list saying why, for metrics only (never rendered); see auth-failure-reasons.ts. */
  readonly reason: string | undefined;
  /** A "did you mean" hint's candidates, narrowed to what the caller may see before sending (name-hint.ts). */
  readonly names: NameHint | undefined;

  constructor(
    code: ErrorCode,
    message: string,
    options: { details?: unknown; hint?: string; headers?: Record<string, string>; cause?: unknown; status?: number; reason?: string; names?: NameHint } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'GatewayError';
    this.code = code;
    this.status = statusFor(code, options.status);
    this.details = options.details;
    this.hint = options.hint;
    this.headers = Object.freeze({ ...(options.headers ?? {}) });
    this.reason = options.reason;
    this.names = options.names;
  }

  /** This error with its "did you mean" hint naming only what `visibility` lets the caller see. */
  visibleTo(visibility: NameVisibility): this {
    if (this.names === undefined) return this;
    const copy = Object.create(Object.getPrototypeOf(this) as object, Object.getOwnPropertyDescriptors(this)) as this;
    Object.defineProperty(copy, 'hint', { value: this.names.hintFor(visibility), enumerable: true });
    return copy;
  }

  /** The error body of docs/errors.md. */
  toJSON(): { code: ErrorCode; message: string; details?: unknown; hint?: string } {
    const body: { code: ErrorCode; message: string; details?: unknown; hint?: string } = { code: this.code, message: this.message };
    if (this.details !== undefined) body.details = this.details;
    if (this.hint !== undefined) body.hint = this.hint;
    return body;
  }
}

/**
 * One status per code, from the catalogue. FUNCTION_STATUS alone takes `status`, and only a 4xx/5xx
 * one: a wrong combination is a bug in the caller of this constructor, so it throws.
 */
function statusFor(code: ErrorCode, status: number | undefined): number {
  const fixed = statusOf(code);
  if (fixed !== undefined) {
    if (status !== undefined && status !== fixed) throw new Error(`GatewayError ${code} always has status ${fixed}, not ${status}`);
    return fixed;
  }
  if (status === undefined || functionStatus(`PT${status}`) !== status) throw new Error(`GatewayError ${code} needs a 4xx or 5xx status, got ${String(status)}`);
  return status;
}

export function isGatewayError(value: unknown): value is GatewayError {
  return value instanceof GatewayError;
}
