/**
 * Writes an export to the response as its rows arrive (docs/querying.md, "Exports").
 * In: the list command, the plan's stream shape, the stream execute opened (its first batch is
 * read, so the status is known to be 200; its batches are the rows' bytes already in the format,
 * lib/db/export-row-encoder.ts) and the export counters. Out: the body, written with
 * backpressure: the next batch is asked for only once the socket took the previous one.
 * Never: holds the whole result, or ends a failed export in a way that looks complete.
 *
 *   json    {"data":[ <row>,<row>... ],"count":<rows>,"limit":<cap>,"offset":<offset>}
 *   ndjson  <row>\n per row
 *   csv     the header line, then one line per row, each ended by CRLF (RFC 4180)
 *
 * When the database fails mid-stream, NDJSON ends with one line `{"error":{"code":...}}` (the
 * usual error body, docs/errors.md) and a clean end; JSON and CSV have no place for it, so the
 * connection is cut (the chunked body never gets its last chunk: clients see an aborted
 * response). When the client goes away, the stream is closed: the running FETCH is cancelled
 * and the connection released.
 */
import type { ServerResponse } from 'node:http';
import type { Command, ReadCommand } from '../../../command/command';
import type { ExportStats, ExportOutcome } from '../../../ops/export-stats';
import type { ResultShape, StreamShape } from '../../../pipeline/plan';
import type { ExportBatch, RowStream } from '../../../pipeline/row-stream';
import { toPublicError } from '../../../http/send-error';
import { csvExportField } from '../../../pipeline/csv-field';

const contentTypes = {
  json: 'application/json; charset=utf-8',
  ndjson: 'application/x-ndjson; charset=utf-8',
  csv: 'text/csv; charset=utf-8; header=present',
} as const;

export async function writeExport(res: ServerResponse, command: Command, shape: ResultShape, stream: RowStream, stats: ExportStats, requestId: string): Promise<void> {
  if (command.kind !== 'read' || shape.kind !== 'stream') {
    // A replacement stage that streams something else is a bug (500), never a misread body.
    await stream.close();
    throw new Error(`a ${command.kind} command with a ${shape.kind} result shape cannot be streamed`);
  }
  return writeRows(res, command, shape, stream, stats, requestId);
}

async function writeRows(res: ServerResponse, command: ReadCommand, shape: StreamShape, stream: RowStream, stats: ExportStats, requestId: string): Promise<void> {
  const { format } = shape;
  stats.started(format);
  let outcome: ExportOutcome = 'complete';
  let clientGone = false;
  const onClose = (): void => {
    if (res.writableFinished) return;
    clientGone = true;
    void stream.close();
  };
  res.on('close', onClose);
  // The client may have gone while the cursor was opened: 'close' has then fired already.
  if (res.destroyed) onClose();
  try {
    res.statusCode = 200;
    res.setHeader('Content-Type', contentTypes[format]);
    if (res.req?.method === 'HEAD') {
      res.end();
      return;
    }
    let rows = 0;
    // Waits for the socket after each write of its own and once per batch: at most one batch is
    // queued in memory.
    const write = async (text: string): Promise<void> => {
      const chunk = Buffer.from(text, 'utf8');
      stats.wrote(format, 0, chunk.length);
      if (!res.write(chunk)) await drained(res);
    };
    if (format === 'json') await write('{"data":[');
    if (format === 'csv') await write(`${shape.columns.map(csvExportField).join(',')}\r\n`);
    for (;;) {
      let batch: ExportBatch | null;
      try {
        batch = await stream.next();
      } catch (err) {
        if (clientGone) break;
        outcome = 'error';
        if (format === 'ndjson') {
          await write(`${JSON.stringify({ error: toPublicError(err, requestId).toJSON() })}\n`);
          res.end();
        } else {
          toPublicError(err, requestId);
          res.destroy();
        }
        return;
      }
      if (batch === null || clientGone) break;
      // The rows' bytes, encoded as they were read (lib/db/export-row-encoder.ts).
      rows += batch.rows;
      stats.wrote(format, batch.rows, batch.bytes);
      let full = false;
      for (const chunk of batch.chunks) full = !res.write(chunk);
      if (full) await drained(res);
      if (clientGone) break;
    }
    if (clientGone) {
      outcome = 'client_closed';
      return;
    }
    if (format === 'json') await write(`],"count":${rows},"limit":${command.root.limit},"offset":${command.root.offset}}`);
    res.end();
  } catch (err) {
    // Writing failed (not the database): nothing more can reach the client.
    outcome = 'error';
    res.destroy();
    throw err;
  } finally {
    if (clientGone && outcome === 'complete') outcome = 'client_closed';
    await stream.close();
    stats.finished(format, outcome);
  }
}

/** Until the socket takes more, or is gone. */
function drained(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    if (res.destroyed) return resolve();
    const done = (): void => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

