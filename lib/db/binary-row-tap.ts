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

export class BinaryRowTap {
  readonly rows: BinaryRows = [];
  private pending: Buffer = Buffer.alloc(0);
  private described = false;
  private finished = false;
  private readonly listener = (chunk: Buffer): void => this.consume(chunk);

  constructor(private readonly stream: Stream) {
    stream.prependListener('data', this.listener);
  }

  stop(): void {
    this.stream.removeListener('data', this.listener);
  }

  private consume(chunk: Buffer): void {
    if (this.finished) return;
    let buffer = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    let offset = 0;
    while (buffer.length - offset >= 5) {
      const type = buffer[offset]!;
      const length = buffer.readInt32BE(offset + 1);
      const end = offset + 1 + length;
      if (end > buffer.length) break;
      if (type === ROW_DESCRIPTION) this.described = true;
      else if (type === DATA_ROW && this.described) this.rows.push(fieldsOf(buffer, offset + 5));
      else if (type === READY_FOR_QUERY || (type === COMMAND_COMPLETE && this.described)) {
        this.finished = true;
        this.stop();
        return;
      }
      offset = end;
    }
    buffer = buffer.subarray(offset);
    // Keep only the unfinished message; copy so the chunk pg also holds is not retained whole.
    this.pending = buffer.length === 0 ? Buffer.alloc(0) : Buffer.from(buffer);
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
