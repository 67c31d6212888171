/**
 * ExportRowEncoder: an export's DataRows, as the bytes PostgreSQL sent, turned straight into the
 * response's bytes (docs/querying.md, "Exports"; docs/performance.md, "Exports").
 * In: the stream shape's format and column kinds (lib/stages/compile/compile-export.ts says which
 * column's text is what), then each DataRow's payload. Out: per batch, Buffers of CSV lines,
 * NDJSON lines or JSON array members. Never: makes a JS string of a value (that, six times a
 * row, was most of the gateway's CPU and the garbage that grew its heap), or writes other bytes
 * than PostgreSQL's to_json / COPY CSV would (__tests__/integration/export-json-text.test.ts).
 *
 *   csv     a field as it is; quoted, quotes doubled, when empty or holding , " CR LF
 *           (`plain` columns never are); NULL empty; each line ended by CRLF
 *   json    {"<name>":<value>,...} with NULL null; a string escaped as escape_json does
 *           (\" \\ \b \f \n \r \t, other bytes below 0x20 as \u00xx, all others as they are,
 *           UTF-8 included); NaN and the infinities quoted; t/f true/false
 */
import type { ExportFormat } from '../command/command';
import { csvBytesNeedQuotes } from '../pipeline/csv-field';
import type { JsonText } from '../pipeline/plan';

export interface EncoderShape {
  readonly format: ExportFormat;
  readonly columns: readonly string[];
  readonly plain: readonly boolean[];
  readonly json: readonly JsonText[];
}

/** Output Buffers are about this large: a few socket writes per batch, none kept long. */
const chunkBytes = 64 * 1024;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const CR = 0x0d;
const LF = 0x0a;
const HEX = Buffer.from('0123456789abcdef', 'latin1');

/** JSON kinds as small integers, looked up once per column instead of per value. */
const RAW = 0;
const NUMBER = 1;
const BOOL = 2;
const PLAIN_STRING = 3;
const STRING = 4;
const kindCodes: Readonly<Record<JsonText, number>> = { raw: RAW, number: NUMBER, bool: BOOL, plainString: PLAIN_STRING, string: STRING };

const TRUE = Buffer.from('true', 'latin1');
const FALSE = Buffer.from('false', 'latin1');
const NULL = Buffer.from('null', 'latin1');

export class ExportRowEncoder {
  private readonly csv: boolean;
  private readonly ndjson: boolean;
  private readonly kinds: Uint8Array;
  private readonly plain: Uint8Array;
  /** `{"a":`, `,"b":`, ...: each column's key as to_json writes it. */
  private readonly keys: readonly Buffer[];
  private readonly keysBytes: number;
  private out: Buffer = Buffer.alloc(0);
  private at = 0;
  private chunks: Buffer[] = [];
  private batchRows = 0;
  private batchBytes = 0;
  private rowsSoFar = 0;

  constructor(shape: EncoderShape) {
    this.csv = shape.format === 'csv';
    this.ndjson = shape.format === 'ndjson';
    const n = shape.columns.length;
    this.kinds = Uint8Array.from({ length: n }, (_, k) => kindCodes[shape.json[k] ?? 'raw']);
    this.plain = Uint8Array.from({ length: n }, (_, k) => (shape.plain[k] === true ? 1 : 0));
    this.keys = shape.columns.map((name, k) => Buffer.from(`${k === 0 ? '{' : ','}${JSON.stringify(name)}:`, 'utf8'));
    this.keysBytes = this.keys.reduce((sum, key) => sum + key.length, 0);
  }

  /** The Buffers and row count of the rows added since the last call. */
  takeBatch(): { readonly rows: number; readonly bytes: number; readonly chunks: readonly Buffer[] } {
    this.flush();
    const batch = { rows: this.batchRows, bytes: this.batchBytes, chunks: this.chunks };
    this.chunks = [];
    this.batchRows = 0;
    this.batchBytes = 0;
    return batch;
  }

  /**
   * One DataRow: `payload` holds it from `start` (its int16 field count) to `end`; each field is
   * an int32 length (-1 for NULL) and that many bytes (PostgreSQL docs, "Message Formats").
   */
  row(payload: Buffer, start: number, end: number): void {
    const count = payload.readInt16BE(start);
    const size = end - start;
    // The most a row can take: every byte escaped (6 bytes for one), plus per-field punctuation.
    this.reserve(this.csv ? 2 * size + 3 * count + 4 : this.keysBytes + 6 * size + 8 * count + 4);
    if (this.csv) this.csvRow(payload, start + 2, count);
    else this.jsonRow(payload, start + 2, count);
    this.batchRows++;
    this.rowsSoFar++;
  }

  private csvRow(b: Buffer, at: number, count: number): void {
    const out = this.out;
    let o = this.at;
    for (let k = 0; k < count; k++) {
      if (k > 0) out[o++] = COMMA;
      const length = (b[at]! << 24) | (b[at + 1]! << 16) | (b[at + 2]! << 8) | b[at + 3]!;
      at += 4;
      if (length < 0) continue;
      const end = at + length;
      if (this.plain[k] === 1 || (length > 0 && !csvBytesNeedQuotes(b, at, end))) {
        o = copyBytes(b, at, end, out, o);
      } else {
        out[o++] = QUOTE;
        for (let i = at; i < end; i++) {
          const c = b[i]!;
          if (c === QUOTE) out[o++] = QUOTE;
          out[o++] = c;
        }
        out[o++] = QUOTE;
      }
      at = end;
    }
    out[o++] = CR;
    out[o++] = LF;
    this.at = o;
  }

  private jsonRow(b: Buffer, at: number, count: number): void {
    const out = this.out;
    let o = this.at;
    if (!this.ndjson && this.rowsSoFar > 0) out[o++] = COMMA;
    for (let k = 0; k < count; k++) {
      const key = this.keys[k];
      if (key !== undefined) o = copyBytes(key, 0, key.length, out, o);
      const length = (b[at]! << 24) | (b[at + 1]! << 16) | (b[at + 2]! << 8) | b[at + 3]!;
      at += 4;
      if (length < 0) {
        o = copyBytes(NULL, 0, 4, out, o);
        continue;
      }
      const end = at + length;
      switch (this.kinds[k]) {
        case NUMBER: {
          // NaN, Infinity and -Infinity are strings in to_json; every other number is itself.
          const first = b[at];
          const quoted = first === 0x4e || first === 0x49 || (first === 0x2d && b[at + 1] === 0x49);
          if (quoted) out[o++] = QUOTE;
          o = copyBytes(b, at, end, out, o);
          if (quoted) out[o++] = QUOTE;
          break;
        }
        case BOOL:
          o = b[at] === 0x74 ? copyBytes(TRUE, 0, 4, out, o) : copyBytes(FALSE, 0, 5, out, o);
          break;
        case PLAIN_STRING:
          out[o++] = QUOTE;
          o = copyBytes(b, at, end, out, o);
          out[o++] = QUOTE;
          break;
        case STRING:
          out[o++] = QUOTE;
          o = escapeJson(b, at, end, out, o);
          out[o++] = QUOTE;
          break;
        default:
          o = copyBytes(b, at, end, out, o);
      }
      at = end;
    }
    out[o++] = 0x7d; // }
    if (this.ndjson) out[o++] = LF;
    this.at = o;
  }

  /** Room for `bytes` more in the current Buffer, else a new one (the full part kept for the batch). */
  private reserve(bytes: number): void {
    if (this.out.length - this.at >= bytes) return;
    this.flush();
    this.out = Buffer.allocUnsafe(Math.max(chunkBytes, bytes));
    this.at = 0;
  }

  private flush(): void {
    if (this.at === 0) return;
    const chunk = this.out.subarray(0, this.at);
    this.chunks.push(chunk);
    this.batchBytes += chunk.length;
    // The rest of the Buffer is not reused: the socket may still hold the part just taken.
    this.out = this.out.subarray(this.at);
    this.at = 0;
  }
}

/**
 * Bytes `at`..`end` of `from` into `out` at `o`; returns the new offset. A loop for the short
 * values an export is mostly made of: Buffer#copy's call costs more than copying a few bytes.
 */
function copyBytes(from: Buffer, at: number, end: number, out: Buffer, o: number): number {
  if (end - at > 64) return o + from.copy(out, o, at, end);
  for (let i = at; i < end; i++) out[o++] = from[i]!;
  return o;
}


/** A string's bytes as PostgreSQL's escape_json (and JSON.stringify) escape them; returns the new offset. */
function escapeJson(b: Buffer, at: number, end: number, out: Buffer, o: number): number {
  let run = at;
  for (let i = at; i < end; i++) {
    const c = b[i]!;
    if (c >= 0x20 && c !== QUOTE && c !== BACKSLASH) continue;
    if (i > run) o = copyBytes(b, run, i, out, o);
    run = i + 1;
    out[o++] = BACKSLASH;
    switch (c) {
      case QUOTE:
        out[o++] = QUOTE;
        break;
      case BACKSLASH:
        out[o++] = BACKSLASH;
        break;
      case 0x08:
        out[o++] = 0x62; // b
        break;
      case 0x0c:
        out[o++] = 0x66; // f
        break;
      case LF:
        out[o++] = 0x6e; // n
        break;
      case CR:
        out[o++] = 0x72; // r
        break;
      case 0x09:
        out[o++] = 0x74; // t
        break;
      default:
        out[o++] = 0x75; // u00xx
        out[o++] = 0x30;
        out[o++] = 0x30;
        out[o++] = HEX[c >> 4]!;
        out[o++] = HEX[c & 15]!;
    }
  }
  if (end > run) o = copyBytes(b, run, end, out, o);
  return o;
}
