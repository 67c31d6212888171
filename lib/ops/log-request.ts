/**
 * The `tablegate:request` debug log (docs/getting-started.md, "Logs"): one line per request the
 * gateway answers, `GET /api/orders 200 list 3.1ms id=<request id>`.
 * In: the request, its response (status set), the command kind or `unknown`, when it started
 * (`performance.now()`).
 * Never: the query string (filter values may be personal data), headers (tokens), or the body.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import createDebug from 'debug';

const log = createDebug('tablegate:request');

export function logRequest(req: IncomingMessage & { originalUrl?: string }, res: ServerResponse, requestId: string, route: string, startedMs: number): void {
  if (!log.enabled) return;
  const url = req.originalUrl ?? req.url ?? '';
  const q = url.indexOf('?');
  const ms = performance.now() - startedMs;
  log('%s %s %d %s %sms id=%s', req.method, q === -1 ? url : url.slice(0, q), res.statusCode, route, ms.toFixed(1), requestId);
}
