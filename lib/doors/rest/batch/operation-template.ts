/**
 * An operation of an expansion before it runs (docs/writing.md, "Batches"): one single request
 * whose body values, query values may be references to the answers of earlier operations.
 * In: the template. Out: the ExpandedOperation the gateway runs: the request with stand-ins for
 * the checks before any SQL, and the request with the real values once the earlier answers exist.
 * Never: parses the body into JS values (each value's text is kept as the caller wrote it, so
 * numbers keep every digit), or lets an operation's body grow past `max_request_body_bytes`.
 */
import { GatewayError } from '../../../errors/gateway-error';
import type { ExpandedOperation, OperationAnswer } from '../../../pipeline/door';
import type { GatewayRequest } from '../../../pipeline/gateway-request';
import { type Reference, resolveReference, referenceQueryValue } from './resolve-reference';

export type ValueTemplate = { readonly text: string } | { readonly ref: Reference };
/** One row object: its keys and values in order. */
export type RowTemplate = readonly (readonly [string, ValueTemplate])[];
export type BodyTemplate = { readonly row: RowTemplate } | { readonly rows: readonly RowTemplate[] } | { readonly text: string };

export interface OperationTemplate {
  readonly method: string;
  /** Path segments below the mount, decoded, and as written (`:id` keeps `%2C`). */
  readonly segments: readonly string[];
  readonly rawSegments: readonly string[];
  /** A reference in the query is an equality filter on the value: `col=eq.<value>`. */
  readonly query: readonly (readonly [string, string | Reference])[];
  readonly body: BodyTemplate | undefined;
  /** Headers the operation carries besides the JSON media types (`prefer`). */
  readonly headers: Readonly<Record<string, string>>;
  readonly where: Readonly<Record<string, unknown>>;
}

/** The stand-in for a reference in the checks before any SQL: a JSON null, an empty filter value. */
const standIn = { body: 'null', query: 'eq.' } as const;

export function toOperation(template: OperationTemplate, parent: GatewayRequest, maxBodyBytes: number): ExpandedOperation {
  const make = (value: (ref: Reference) => string, query: (ref: Reference) => string): GatewayRequest => {
    const body = template.body === undefined ? undefined : bodyText(template.body, value);
    if (body !== undefined && Buffer.byteLength(body) > maxBodyBytes) {
      throw new GatewayError('PAYLOAD_TOO_LARGE', `The operation's body is larger than ${maxBodyBytes} bytes (max_request_body_bytes).`, { details: { max_request_body_bytes: maxBodyBytes } });
    }
    return Object.freeze({
      id: parent.id,
      method: template.method,
      segments: template.segments,
      rawSegments: template.rawSegments,
      query: Object.freeze(template.query.map(([k, v]) => Object.freeze([k, typeof v === 'string' ? v : query(v)] as const))),
      headers: Object.freeze({ accept: 'application/json', 'content-type': 'application/json', ...template.headers }),
      body,
      loopback: parent.loopback,
    });
  };
  return Object.freeze({
    where: template.where,
    checked: make(() => standIn.body, () => standIn.query),
    request: (earlier: readonly (OperationAnswer | undefined)[]) =>
      make(
        (ref) => resolveReference(ref, earlier),
        (ref) => `eq.${referenceQueryValue(ref, resolveReference(ref, earlier))}`,
      ),
  });
}

function bodyText(body: BodyTemplate, value: (ref: Reference) => string): string {
  if ('text' in body) return body.text;
  if ('row' in body) return rowText(body.row, value);
  return `[${body.rows.map((row) => rowText(row, value)).join(',')}]`;
}

function rowText(row: RowTemplate, value: (ref: Reference) => string): string {
  return `{${row.map(([k, v]) => `${JSON.stringify(k)}:${'text' in v ? v.text : value(v.ref)}`).join(',')}}`;
}
