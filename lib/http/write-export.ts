/**
 * Writes an export to the response as its rows arrive (docs/querying.md, "Exports").
 * In: the list command, the plan's stream shape, the stream execute opened (its first batch is
 * read, so the status is known to be 200) and the export counters. Out: the body, written with
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
import type { Command, ListCommand } from '../command/command';
import type { ExportStats, ExportOutcome } from '../ops/export-stats';
import type { JsonText, ResultShape, StreamShape } from '../pipeline/plan';
import type { RowStream } from '../pipeline/row-stream';
import { toPublicError } from './send-error';

/** Rows per write: about 32 KB of CSV or 64 KB of JSON for a typical row. */
const sliceRows = 400;

const contentTypes = {
  json: 'application/json; charset=utf-8',
  ndjson: 'application/x-ndjson; charset=utf-8',
  csv: 'text/csv; charset=utf-8; header=present',
} as const;

export async function writeExport(res: ServerResponse, command: Command, shape: ResultShape, stream: RowStream, stats: ExportStats, requestId: string): Promise<void> {
  if (command.kind !== 'list' || shape.kind !== 'stream') {
    // A replacement stage that streams something else is a bug (500), never a misread body.
    await stream.close();
    throw new Error(`a ${command.kind} command with a ${shape.kind} result shape cannot be streamed`);
  }
  return writeRows(res, command, shape, stream, stats, requestId);
}

async function writeRows(res: ServerResponse, command: ListCommand, shape: StreamShape, stream: RowStream, stats: ExportStats, requestId: string): Promise<void> {
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
    // Each column's key as to_json writes it (escaped as a string is), after the comma before it.
    const keys = shape.columns.map((name, k) => `${k > 0 ? ',' : ''}${JSON.stringify(name)}:`);
    // Waits for the socket once per batch (`settle`): at most one batch is queued in memory.
    const write = async (text: string, count: number, settle = true): Promise<void> => {
      const chunk = Buffer.from(text, 'utf8');
      stats.wrote(format, count, chunk.length);
      if (!res.write(chunk) && settle) await drained(res);
    };
    if (format === 'json') await write('{"data":[', 0);
    if (format === 'csv') await write(`${shape.columns.map(csvName).join(',')}\r\n`, 0);
    for (;;) {
      let batch: readonly (readonly (string | null)[])[] | null;
      try {
        batch = await stream.next();
      } catch (err) {
        if (clientGone) break;
        outcome = 'error';
        if (format === 'ndjson') {
          await write(`${JSON.stringify({ error: toPublicError(err, requestId).toJSON() })}\n`, 0);
          res.end();
        } else {
          toPublicError(err, requestId);
          res.destroy();
        }
        return;
      }
      if (batch === null || clientGone) break;
      // In slices: small strings and buffers are young objects a scavenge frees at once, while
      // one string per batch (a megabyte) would wait for a full collection and grow the heap.
      for (let i = 0; i < batch.length && !clientGone; i += sliceRows) {
        const slice = batch.slice(i, i + sliceRows);
        const text = format === 'csv' ? csvLines(slice, shape.plain) : jsonLines(slice, keys, shape.json, format === 'ndjson' ? '\n' : ',', rows > 0);
        rows += slice.length;
        await write(text, slice.length, i + sliceRows >= batch.length);
      }
      if (clientGone) break;
    }
    if (clientGone) {
      outcome = 'client_closed';
      return;
    }
    if (format === 'json') await write(`],"count":${rows},"limit":${command.limit},"offset":${command.offset}}`, 0);
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

/** NDJSON: each row's JSON and a newline; JSON: the rows joined by commas, after a comma when rows came before. */
function jsonLines(rows: readonly (readonly (string | null)[])[], keys: readonly string[], json: readonly JsonText[], separator: string, after: boolean): string {
  let text = after && separator === ',' ? ',' : '';
  for (let i = 0; i < rows.length; i++) {
    text += jsonRow(rows[i]!, keys, json);
    if (separator === '\n' || i < rows.length - 1) text += separator;
  }
  return text;
}

/**
 * One row's object from its columns' text (compile-export.ts says which text is what), byte for
 * byte PostgreSQL's to_json of the row: NULL is null, and JSON.stringify escapes a string exactly
 * as to_json does (\" \\ \b \f \n \r \t, other characters below U+0020 as \u00xx, the rest as
 * they are; __tests__/integration/export-json-text.test.ts compares them).
 */
function jsonRow(row: readonly (string | null)[], keys: readonly string[], json: readonly JsonText[]): string {
  let text = '{';
  for (let k = 0; k < keys.length; k++) {
    text += keys[k]!;
    const v = row[k];
    if (v === null || v === undefined) {
      text += 'null';
      continue;
    }
    switch (json[k]) {
      case 'raw':
        text += v;
        break;
      case 'number':
        text += v === 'NaN' || v === 'Infinity' || v === '-Infinity' ? `"${v}"` : v;
        break;
      case 'bool':
        text += v === 't' ? 'true' : 'false';
        break;
      case 'plainString':
        text += `"${v}"`;
        break;
      case 'string':
      default:
        text += JSON.stringify(v);
    }
  }
  return `${text}}`;
}

/** Needs quoting (RFC 4180, and as COPY ... CSV writes an empty string): empty, or a comma, quote, CR or LF. */
const needsQuotes = /^$|[",\r\n]/;

/**
 * CSV lines, each ended by CRLF: NULL is an empty field; a value that needs it is quoted with its
 * quotes doubled; `plain` columns (compile-export.ts) are never tested.
 */
function csvLines(rows: readonly (readonly (string | null)[])[], plain: readonly boolean[]): string {
  let text = '';
  for (const row of rows) {
    for (let k = 0; k < row.length; k++) {
      const v = row[k];
      if (k > 0) text += ',';
      if (v === null || v === undefined) continue;
      text += plain[k] === true || !needsQuotes.test(v) ? v : `"${v.replace(/"/g, '""')}"`;
    }
    text += '\r\n';
  }
  return text;
}

/** A header name, quoted as a field is. */
function csvName(name: string): string {
  return needsQuotes.test(name) ? `"${name.replace(/"/g, '""')}"` : name;
}
