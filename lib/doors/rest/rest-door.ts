/**
 * The default door: tablegate's own REST grammar (docs/querying.md, docs/writing.md,
 * docs/relations.md, docs/rpc.md). Parse: parse/ (one file per route). Respond: respond/ (a
 * page, a row, a write, a call as JSON; an export as its rows arrive; errors as the catalogue's
 * body, docs/errors.md). It gives execute no hooks: database errors mean what the catalogue says.
 */
import type { Door } from '../../pipeline/door';
import type { CursorCodec } from '../../pipeline/cursor-codec';
import type { ExportStats } from '../../ops/export-stats';
import { sendError, sendJson } from '../../http/send-error';
import { filterOps } from '../../command/command';
import { queryPattern } from '../shared/query-pattern';
import { createParseStage } from './parse/create-parse-stage';
import { aggregateParameters } from './parse/parse-aggregate';
import { reservedParameters } from './parse/parse-list';
import { renderResult } from './respond/render-result';
import { writeExport } from './respond/write-export';
import { batchRoute, expandRequest } from './batch/expand-request';

export function createRestDoor(deps: { readonly cursors: CursorCodec; readonly exportStats: ExportStats }): Door {
  const { cursors, exportStats } = deps;
  return {
    name: 'rest',
    parse: createParseStage(cursors),
    pattern: queryPattern,
    execute: {},
    describes: { filterOperators: filterOps, reservedParameters: [...new Set([...reservedParameters, 'returning', ...aggregateParameters])], batches: true },
    readsBody: (method) => method === 'POST' || method === 'PATCH',
    // Batches, nested inserts and bulk updates: several single requests in one transaction (docs/writing.md).
    expand: expandRequest,
    render: (command, plan, result) => renderResult(command, plan, result, cursors),
    bodyLimit: (path, config) => (path === `/${batchRoute}` ? config.maxBatchBodyBytes : undefined),
    send(res, command, plan, result, requestId) {
      // An export: written as its rows arrive (docs/querying.md, "Exports").
      if (result.stream) return writeExport(res, command, plan.shape, result.stream, exportStats, requestId);
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
