/**
 * The only place an error becomes a response. GatewayErrors are shown as they are; anything
 * else is masked as INTERNAL_ERROR with the request id, and logged with that id.
 */
import type { ServerResponse } from 'node:http';
import createDebug from 'debug';
import { GatewayError, isGatewayError } from '../errors/gateway-error';

const log = createDebug('tablegate:error');

export function toPublicError(err: unknown, requestId: string): GatewayError {
  if (isGatewayError(err)) return err;
  log('request %s failed: %O', requestId, err);
  // Unexpected failures are printed even without DEBUG, so an operator can match the request id.
  console.error(`tablegate: internal error in request ${requestId}: ${err instanceof Error ? err.stack ?? err.message : String(err)}`);
  return new GatewayError('INTERNAL_ERROR', 'The gateway failed to handle the request.', { details: { request_id: requestId } });
}

export function sendError(res: ServerResponse, err: unknown, requestId: string): GatewayError {
  const error = toPublicError(err, requestId);
  if (res.headersSent) {
    res.destroy();
    return error;
  }
  res.statusCode = error.status;
  for (const [name, value] of Object.entries(error.headers)) res.setHeader(name, value);
  // Every 401 names the scheme (RFC 9110 §11.6.1), also one a function chose with RAISE SQLSTATE 'PT401'.
  if (error.status === 401 && !res.hasHeader('WWW-Authenticate')) res.setHeader('WWW-Authenticate', 'Bearer');
  sendJson(res, JSON.stringify(error.toJSON()));
  return error;
}

export function sendJson(res: ServerResponse, body: string): void {
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.end(res.req?.method === 'HEAD' ? undefined : body);
}
