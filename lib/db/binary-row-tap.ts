/**
 * BinaryRowTap: the bytes of the DataRow fields of one pipelined batch, read from the connection's
 * stream beside pg's own parser.
 *
 * Why: pg-protocol decodes every DataRow field as UTF-8 text, and for binary-format columns pg
 * turns that text back into a Buffer; bytes that are not valid UTF-8 do not survive the round trip
 * (brianc/node-postgres#3495: the int4 1000 comes back as 1007). The tap frames the backend
 * messages itself (type byte, int32 length; PostgreSQL docs §55.7 "Message Formats") and keeps the
 * fields of the DataRows between the first RowDescription and the CommandComplete after it, i.e.
 * of the one statement the batch Describes (statements after it, such as the reset's context
 * statement, return rows of their own). It is prepended to the stream's listeners, so it has seen a chunk before pg's parser
 * can finish the batch on that chunk's ReadyForQuery. Nothing of pg is patched.
 *
 * Only valid on a connection with nothing in flight: the first byte after `submit` then starts a
 * message.
 */
export interface Stream {
  prependListener(event: 'data', listener: (chunk: Buffer) => void): unknown;
  removeListener(event: 'data', listener: (chunk: Buffer) => void): unknown;
}

export type BinaryRows = (Buffer | null)[][];

const ROW_DESCRIPTION = 0x54; // 'T'
const DATA_ROW = 0x44; // 'D'
const COMMAND_COMPLETE = 0x43; // 'C'
const READY_FOR_QUERY = 0x5a; // 'Z'

/**
 * Thrown by the tap (from the socket's 'data' listener, where catch-stream-errors.ts turns it into
 * the connection's error) when the statement's rows are over the bound: read from the DataRows'
 * headers, before their bytes are buffered.
 */
export class BinaryRowsTooLargeError extends Error {
  constructor(readonly bytes: number) {
    super(`the result rows are at least ${bytes} bytes`);
    this.name = 'BinaryRowsTooLargeError';
  }
}

export class BinaryRowTap {
  readonly rows: BinaryRows = [];
  /** The unfinished message: its first bytes (fewer than 5: no length yet), or a buffer of its whole length being filled. */
  private partial: Buffer | undefined;
  private filled = 0;
  private described = false;
  private finished = false;
  /** Bytes of the statement's DataRows so far, checked against `maxBytes`. */
  private rowBytes = 0;
  private readonly listener = (chunk: Buffer): void => this.consume(chunk);

  /** `maxBytes`: the most bytes of DataRows the statement may send (max_response_bytes); over it, the listener throws BinaryRowsTooLargeError. */
  constructor(
    private readonly stream: Stream,
    private readonly maxBytes = Infinity,
  ) {
    stream.prependListener('data', this.listener);
  }

  stop(): void {
    this.stream.removeListener('data', this.listener);
  }

  /**
   * Each message is copied at most once: an unfinished one into a buffer of its announced length
   * (Buffer.concat of the pending bytes with every chunk would copy a 600 MB value thousands of
   * times, blocking the event loop for all tenants).
   */
  private consume(chunk: Buffer): void {
    if (this.finished) return;
    let offset = 0;
    if (this.partial !== undefined) {
      offset = this.fill(chunk);
      if (this.partial.length < 5 || this.filled < this.partial.length) return;
      const message = this.partial;
      this.partial = undefined;
      // Its DataRow was counted when its length arrived (start).
      if (this.handle(message, 0, true)) return;
    }
    while (chunk.length - offset >= 5) {
      const end = offset + 1 + chunk.readInt32BE(offset + 1);
      if (end > chunk.length) break;
      if (this.handle(chunk, offset, false)) return;
      offset = end;
    }
    if (offset === chunk.length) return;
    // Keep only the unfinished message, copied: the chunk pg also holds is not retained whole.
    this.partial = chunk.subarray(offset).length < 5 ? Buffer.from(chunk.subarray(offset)) : this.start(chunk.subarray(offset));
  }

  /** A buffer of the whole message whose start is `head` (5 bytes or more), `head` copied in. */
  private start(head: Buffer): Buffer {
    const length = head.readInt32BE(1);
    if (head[0] === DATA_ROW && this.described) this.count(length);
    const message = Buffer.allocUnsafe(1 + length);
    this.filled = head.copy(message, 0, 0, Math.min(head.length, message.length));
    return message;
  }

  /** Copies the head of `chunk` into the unfinished message; returns how many bytes it took. */
  private fill(chunk: Buffer): number {
    let taken = 0;
    if (this.partial!.length < 5) {
      taken = Math.min(5 - this.partial!.length, chunk.length);
      const head = Buffer.concat([this.partial!, chunk.subarray(0, taken)]);
      if (head.length < 5) {
        this.partial = head;
        return taken;
      }
      this.partial = this.start(head);
    }
    const take = Math.min(this.partial!.length - this.filled, chunk.length - taken);
    chunk.copy(this.partial!, this.filled, taken, taken + take);
    this.filled += take;
    return taken + take;
  }

  private count(length: number): void {
    this.rowBytes += length;
    if (this.rowBytes > this.maxBytes) {
      this.finished = true;
      this.stop();
      throw new BinaryRowsTooLargeError(this.rowBytes);
    }
  }

  /** One whole message at `offset`; true when the statement's rows are complete (the tap stops). */
  private handle(buffer: Buffer, offset: number, counted: boolean): boolean {
    const type = buffer[offset]!;
    if (type === ROW_DESCRIPTION) this.described = true;
    else if (type === DATA_ROW && this.described) {
      if (!counted) this.count(buffer.readInt32BE(offset + 1));
      this.rows.push(fieldsOf(buffer, offset + 5));
    } else if (type === READY_FOR_QUERY || (type === COMMAND_COMPLETE && this.described)) {
      this.finished = true;
      this.stop();
      return true;
    }
    return false;
  }
}

function fieldsOf(buffer: Buffer, start: number): (Buffer | null)[] {
  const count = buffer.readInt16BE(start);
  const fields: (Buffer | null)[] = new Array(count);
  let at = start + 2;
  for (let i = 0; i < count; i++) {
    const length = buffer.readInt32BE(at);
    at += 4;
    if (length < 0) fields[i] = null;
    else {
      // A copy: the chunk buffer may be reused by the socket.
      fields[i] = Buffer.from(buffer.subarray(at, at + length));
      at += length;
    }
  }
  return fields;
}
