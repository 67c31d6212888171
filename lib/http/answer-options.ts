/**
 * OPTIONS on a data route that no host cors() middleware answered: 204 with the route's `Allow`
 * header. In: the Express request; out: the response, sent. Never authenticates, waits for the
 * schema or runs SQL: a browser's CORS preflight carries no credentials, so answering it 401 (as
 * the auth stage would) only breaks the browser's real request (docs/security.md, "Browsers and CORS").
 */
import type { Request, Response } from 'express';
import { GatewayError } from '../errors/gateway-error';
import { digestRequest, requestIdOf } from './digest-request';
import { routeMethods } from './route-methods';
import { sendError } from './send-error';

export function answerOptions(req: Request, res: Response): void {
  const requestId = requestIdOf(req);
  res.setHeader('X-Request-Id', requestId);
  try {
    const methods = routeMethods(digestRequest(req, requestId).segments);
    if (methods === undefined) {
      throw new GatewayError('NOT_FOUND', 'No such route.', { hint: 'Data routes are /{table}, /{table}/:id and /{table}/:id/{child}; functions are POST /rpc/{function}.' });
    }
    res.statusCode = 204;
    res.setHeader('Allow', [...methods, 'OPTIONS'].join(', '));
    res.end();
  } catch (err) {
    sendError(res, err, requestId);
  }
}
