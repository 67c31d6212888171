/**
 * RawRowQuery: a simple-protocol statement whose DataRows are handed over as bytes and never
 * parsed by pg (docs/performance.md, "Exports").
 * In: the statement's text (no parameters: an export's FETCH) and a callback per DataRow. Out: a
 * Submittable for `client.query()`, and its promise, settled at ReadyForQuery or on the error.
 * Never: patches pg, or lets pg's parser see a partial message or a DataRow of this statement.
 *
 * Why: pg-protocol turns every field of every DataRow into a JS string; for an export of a
 * million rows that was most of the gateway's CPU and its young-generation garbage. While the
 * statement runs, pg's 'data' listener on the connection's stream is swapped for a filter that
 * frames the backend messages itself (type byte, int32 length; PostgreSQL docs, "Message
 * Formats"), as lib/db/binary-row-tap.ts does, keeps the DataRows and passes every other message
 * (RowDescription, CommandComplete, ErrorResponse, notices, ReadyForQuery) to pg's listener
 * unchanged, so pg's client goes through the same states as for any query: its errors are
 * pg's DatabaseErrors, and its queue moves on at ReadyForQuery. The listener is back in place
 * before ReadyForQuery reaches pg, together with any bytes after it.
 */
import type { EventEmitter } from 'node:events';

const DATA_ROW = 0x44; // 'D'
const READY_FOR_QUERY = 0x5a; // 'Z'

type DataListener = (chunk: Buffer) => void;

interface Connection {
  readonly stream: Pick<EventEmitter, 'on' | 'removeListener' | 'listeners'>;
  query(text: string): void;
  sendCopyFail(message: string): void;
}

export class RawRowQuery {
  readonly done: Promise<void>;
  private resolve!: () => void;
  private reject!: (err: unknown) => void;
  private settled = false;
  private restore: (() => void) | undefined;

  constructor(
    private readonly text: string,
    private readonly onRow: (payload: Buffer, start: number, end: number) => void,
  ) {
    this.done = new Promise((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    this.done.catch(() => undefined); // the caller awaits it; an early failure is not unhandled
  }

  /** Called by pg's client when the connection is free. */
  submit(connection: Connection): void {
    const stream = connection.stream;
    const pgListeners = stream.listeners('data') as DataListener[];
    let pending: Buffer | undefined;
    const ready = (passed: Buffer[]): void => {
      // The statement is over: pg reads on by itself from here, this chunk's rest included.
      this.uninstall();
      forward(pgListeners, passed);
    };
    const filter = (chunk: Buffer): void => {
      const passed: Buffer[] = [];
      let from = 0;
      if (pending !== undefined) {
        // Complete the unfinished message from the head of this chunk; the rest is not copied.
        while (from < chunk.length && !isWhole(pending)) {
          const take = Math.min(missing(pending), chunk.length - from);
          pending = Buffer.concat([pending, chunk.subarray(from, from + take)]);
          from += take;
        }
        if (!isWhole(pending)) return;
        const message = pending;
        pending = undefined;
        if (this.scan(message, 0, passed) < 0) {
          passed.push(chunk.subarray(from));
          return ready(passed);
        }
      }
      const stop = this.scan(chunk, from, passed);
      if (stop < 0) return ready(passed);
      // A copy of the unfinished message: the chunk may be reused by the socket.
      if (stop < chunk.length) pending = Buffer.from(chunk.subarray(stop));
      forward(pgListeners, passed);
    };
    stream.on('data', filter);
    for (const listener of pgListeners) stream.removeListener('data', listener);
    this.restore = () => {
      for (const listener of pgListeners) stream.on('data', listener);
      stream.removeListener('data', filter);
    };
    connection.query(this.text);
  }

  /**
   * The whole messages of `buffer` from `offset`: DataRows to onRow, runs of other messages onto
   * `passed`. Returns where an unfinished message starts, or -1 at ReadyForQuery (the buffer's
   * rest then on `passed` too).
   */
  private scan(buffer: Buffer, offset: number, passed: Buffer[]): number {
    let passFrom = -1; // start of a run of messages for pg
    while (buffer.length - offset >= 5) {
      const type = buffer[offset]!;
      const end = offset + 1 + buffer.readInt32BE(offset + 1);
      if (end > buffer.length) break;
      if (type === DATA_ROW) {
        if (passFrom >= 0) passed.push(buffer.subarray(passFrom, offset));
        passFrom = -1;
        this.onRow(buffer, offset + 5, end);
      } else {
        if (passFrom < 0) passFrom = offset;
        if (type === READY_FOR_QUERY) {
          passed.push(buffer.subarray(passFrom));
          return -1;
        }
      }
      offset = end;
    }
    if (passFrom >= 0) passed.push(buffer.subarray(passFrom, offset));
    return offset;
  }

  private uninstall(): void {
    const restore = this.restore;
    this.restore = undefined;
    restore?.();
  }

  handleRowDescription(): void {}
  handleDataRow(): void {}
  handleCommandComplete(): void {}
  handleEmptyQuery(): void {}
  handlePortalSuspended(): void {}
  handleCopyInResponse(connection: Connection): void {
    connection.sendCopyFail('tablegate: COPY is not expected here');
  }
  handleCopyData(): void {}

  /**
   * An ErrorResponse, or pg's own error (the connection ended): settles at once, as pg's Query
   * does. The filter stays until ReadyForQuery, which follows an ErrorResponse (it may hold the
   * start of that message); a connection that ended is discarded with it.
   */
  handleError(err: unknown): void {
    if (this.settled) return;
    this.settled = true;
    this.reject(err);
  }

  handleReadyForQuery(): void {
    this.uninstall();
    if (this.settled) return;
    this.settled = true;
    this.resolve();
  }
}

/** A message's bytes are all there (type byte, int32 length, payload). */
function isWhole(message: Buffer): boolean {
  return message.length >= 5 && message.length === 1 + message.readInt32BE(1);
}

/** Bytes still missing: of the header, or of the message its header announces. */
function missing(message: Buffer): number {
  return (message.length < 5 ? 5 : 1 + message.readInt32BE(1)) - message.length;
}

function forward(listeners: readonly DataListener[], parts: readonly Buffer[]): void {
  if (parts.length === 0) return;
  const bytes = parts.length === 1 ? parts[0]! : Buffer.concat(parts);
  if (bytes.length === 0) return;
  for (const listener of listeners) listener(bytes);
}
