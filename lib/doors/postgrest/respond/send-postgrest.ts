/**
 * The only code that writes the PostgREST dialect's responses to `res`: a rendered response, or an
 * error as PostgREST sends it (docs/postgrest-dialect.md, "Errors"). In: the response or the
 * error. Never: a body for HEAD; an error's stack or SQL text (toPublicError masks anything that
 * is not a GatewayError as PGRSTX00 with the request id).
 */
import type { ServerResponse } from 'node:http';
import { toPublicError } from '../../../http/send-error';
import { postgrestErrorBody, type PostgrestVersion } from './postgrest-error-body';
import type { PostgrestResponse } from './render-postgrest';

export function sendPostgrest(res: ServerResponse, response: PostgrestResponse): void {
  res.statusCode = response.status;
  for (const [name, value] of Object.entries(response.headers)) res.setHeader(name, value);
  if (response.body === null) {
    res.end();
    return;
  }
  res.setHeader('Content-Length', Buffer.byteLength(response.body));
  res.end(res.req?.method === 'HEAD' ? undefined : response.body);
}

export function sendPostgrestError(res: ServerResponse, err: unknown, requestId: string, anonymous: boolean, version: PostgrestVersion): void {
  const error = toPublicError(err, requestId);
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const { status, body, headers } = postgrestErrorBody(error, anonymous, version);
  res.statusCode = status;
  for (const [name, value] of Object.entries(headers ?? error.headers)) res.setHeader(name, value);
  if (status === 401 && !res.hasHeader('WWW-Authenticate')) res.setHeader('WWW-Authenticate', 'Bearer');
  const text = JSON.stringify(body);
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.end(res.req?.method === 'HEAD' ? undefined : text);
}
