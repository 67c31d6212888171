/**
 * An error of one part of a larger request (an operation of a batch, a row of a bulk update:
 * docs/writing.md), with `details` saying which part (`{ "operation": 2 }`) and the message
 * prefixed to match. The code, status, headers and hint stay; so do the "did you mean"
 * candidates, so the hint is still narrowed to what the caller may see before it is sent.
 */
import { GatewayError } from './gateway-error';

export function locatedError(err: GatewayError, where: Readonly<Record<string, unknown>>, label: string): GatewayError {
  const details = typeof err.details === 'object' && err.details !== null ? err.details : {};
  return new GatewayError(err.code, `${label}: ${err.message}`, {
    details: { ...details, ...where },
    ...(err.hint === undefined ? {} : { hint: err.hint }),
    headers: { ...err.headers },
    status: err.status,
    ...(err.names === undefined ? {} : { names: err.names }),
    cause: err,
  });
}
