/**
 * One HTTP exchange with the gateway over the global `fetch` (or the one given). In: a method,
 * a path below the base URL, a query and an optional JSON body text. Out: the gateway's response
 * envelope plus `error: null`, or `data: null` with a TablegateClientError (the gateway's error body,
 * docs/errors.md). Never: rejects on an HTTP or network error, or logs the token.
 */
import { TablegateClientError, type GatewayErrorBody } from './client-error';
import type { ClientResult } from './client-types';
import { queryString } from './encode-query';

/** What the client needs of `fetch`; the browser's and Node's `fetch` both fit. */
export type FetchLike = (
  url: string,
  init: { method: string; headers: Record<string, string>; body?: string },
) => Promise<{ readonly status: number; readonly headers: { get(name: string): string | null }; text(): Promise<string> }>;

export interface ClientOptions {
  /** A bearer token (JWT), or a function that returns the current one before each request. */
  readonly token?: string | (() => string | Promise<string>);
  /** Default: the global `fetch`. */
  readonly fetch?: FetchLike;
  /** Sent with every request (e.g. `x-request-id`); the client's own headers win over these. */
  readonly headers?: Readonly<Record<string, string>>;
}

export interface Transport {
  readonly baseUrl: string;
  readonly fetch: FetchLike;
  readonly token: ClientOptions['token'];
  readonly headers: Readonly<Record<string, string>>;
}

export interface OutgoingRequest {
  readonly method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  readonly path: string;
  readonly query?: readonly (readonly [string, string])[];
  readonly headers?: Readonly<Record<string, string>>;
  /** JSON text; sent with `Content-Type: application/json`. */
  readonly body?: string;
}

export async function sendRequest<B>(transport: Transport, request: OutgoingRequest): Promise<ClientResult<B>> {
  const headers: Record<string, string> = { ...transport.headers, ...request.headers, accept: 'application/json' };
  const token = typeof transport.token === 'function' ? await transport.token() : transport.token;
  if (token) headers.authorization = `Bearer ${token}`;
  if (request.body !== undefined) headers['content-type'] = 'application/json';
  const url = transport.baseUrl + request.path + queryString(request.query ?? []);
  let status = 0;
  let requestId: string | undefined;
  let text: string;
  try {
    const response = await transport.fetch(url, { method: request.method, headers, ...(request.body === undefined ? {} : { body: request.body }) });
    status = response.status;
    requestId = response.headers.get('x-request-id') ?? undefined;
    text = await response.text();
  } catch (cause) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    return failure(new TablegateClientError({ code: 'NETWORK_ERROR', message: `${request.method} ${request.path}: no answer from the gateway (${reason}).`, status, cause, ...(requestId ? { requestId } : {}) }));
  }
  const body = parseJson(text);
  if (status >= 200 && status < 300) {
    if (text === '') return { data: null, error: null, status } as ClientResult<B>;
    if (isObject(body) && 'data' in body) return { ...body, error: null, status } as ClientResult<B>;
    return failure(unexpected(status, text, requestId, 'a success answer without a JSON `data` envelope'));
  }
  if (isObject(body) && typeof body.code === 'string' && typeof body.message === 'string') {
    const error = body as unknown as GatewayErrorBody;
    return failure(
      new TablegateClientError({
        code: error.code,
        message: error.message,
        status,
        ...(error.details === undefined ? {} : { details: error.details }),
        ...(typeof error.hint === 'string' ? { hint: error.hint } : {}),
        ...(requestId ? { requestId } : {}),
      }),
    );
  }
  return failure(unexpected(status, text, requestId, 'an error answer without the gateway error body'));
}

function failure(error: TablegateClientError): { data: null; error: TablegateClientError; status: number } {
  return { data: null, error, status: error.status };
}

function unexpected(status: number, text: string, requestId: string | undefined, what: string): TablegateClientError {
  return new TablegateClientError({
    code: 'UNEXPECTED_RESPONSE',
    message: `HTTP ${status}: ${what}.`,
    status,
    details: { body: text.slice(0, 500) },
    ...(requestId ? { requestId } : {}),
  });
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
