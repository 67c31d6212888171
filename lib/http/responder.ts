/**
 * How one dialect answers (docs/architecture.md, "Dialects"): which methods carry a body, how a
 * result and an error are written. The default dialect and the PostgREST dialect are two
 * responders over the same pipeline; lib/create-gateway.ts picks one, with the matching parse
 * stage, once at creation. In: the command, plan and result, or an error. Never: runs a stage or
 * reads anything but its arguments. Exports (default dialect) are written by write-export.ts.
 */
import type { ServerResponse } from 'node:http';
import type { Command } from '../command/command';
import type { CursorCodec } from '../pipeline/cursor-codec';
import type { Plan } from '../pipeline/plan';
import type { Result } from '../pipeline/result';
import { renderPostgrest } from './postgrest/render-postgrest';
import { sendPostgrest, sendPostgrestError } from './postgrest/send-postgrest';
import { renderResult } from './render-result';
import { sendError, sendJson } from './send-error';

export interface Responder {
  /** Whether a request of this method has a body to read (the router has no body parser). */
  readsBody(method: string): boolean;
  /** Writes a result: status, headers and body. */
  send(res: ServerResponse, command: Command, plan: Pick<Plan, 'shape'>, result: Result): void;
  /** Writes an error; `anonymous`: the caller had no credentials (PostgREST answers 401 then, not 403). */
  sendError(res: ServerResponse, err: unknown, requestId: string, anonymous: boolean): void;
}

export function defaultResponder(cursors: CursorCodec): Responder {
  return {
    readsBody: (method) => method === 'POST' || method === 'PATCH',
    send(res, command, plan, result) {
      const rendered = renderResult(command, plan, result, cursors);
      res.statusCode = rendered.status;
      if (rendered.body === null) res.end();
      else sendJson(res, rendered.body);
    },
    sendError(res, err, requestId) {
      sendError(res, err, requestId);
    },
  };
}

/** The PostgREST dialect: PUT upserts carry a body too; `schemas` name the profiles in Content-Range etc. */
export function postgrestResponder(schemas: readonly string[]): Responder {
  return {
    readsBody: (method) => method === 'POST' || method === 'PATCH' || method === 'PUT',
    send(res, command, plan, result) {
      sendPostgrest(res, renderPostgrest(command, plan, result, schemas));
    },
    sendError: sendPostgrestError,
  };
}
