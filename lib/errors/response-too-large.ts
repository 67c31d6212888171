/**
 * RESPONSE_TOO_LARGE (docs/errors.md): a response body over `max_response_bytes`. PostgreSQL
 * measures the body where it builds it (lib/stages/compile/size-checked.ts) and fails the
 * statement with an input-function error (22P02) quoting `responseSizeMarker` and the size, so
 * nothing larger than the bound is ever sent to the gateway; execute turns that error into this
 * one. The marker's random part, new in each process, keeps a caller's value that spells it from
 * passing for it (as the markers of lib/errors/statement-markers.ts); it is only ever a bound value.
 */
import { randomBytes } from 'node:crypto';
import { GatewayError } from './gateway-error';

export const responseSizeMarker = `tablegate_response_too_large_${randomBytes(16).toString('hex')}`;

/** `size`: the body's bytes when PostgreSQL measured them; undefined when the driver could not hold it. */
export function responseTooLarge(maxBytes: number, size: number | undefined, cause?: unknown): GatewayError {
  const over = size === undefined ? 'is larger than the gateway can hold' : `would be ${size} bytes`;
  return new GatewayError('RESPONSE_TOO_LARGE', `The response ${over}; max_response_bytes is ${maxBytes}.`, {
    details: { max_response_bytes: maxBytes, ...(size === undefined ? {} : { size }) },
    hint: 'Ask for fewer rows (limit) or columns (select); to read many rows, stream them as an export (default dialect: Accept: application/x-ndjson or text/csv, docs/querying.md "Exports"), which max_response_bytes does not bound.',
    ...(cause === undefined ? {} : { cause }),
  });
}
