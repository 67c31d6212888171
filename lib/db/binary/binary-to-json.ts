/**
 * JSON text of a binary-format result value, byte for byte what PostgreSQL's to_json(value)::text
 * gives, so that the binary result path renders exactly like the text path.
 *
 * In: a type OID, the value's bytes as the type's send function wrote them (NULL as null), and
 * the session TimeZone (current_setting('TimeZone')) for timestamptz. Out: JSON text. It must
 * never guess: a type it cannot decode is an Error (isBinaryDecodable says so beforehand, and the
 * caller asks PostgreSQL for to_json(col) instead), and so is a value whose length does not fit.
 *
 * What to_json does, per category (datum_to_json_internal in src/backend/utils/adt/json.c):
 * numbers as their output text, quoted when not a valid JSON number (NaN, Infinity); bool as
 * true/false; json and jsonb as their text unchanged; dates and timestamps in ISO 8601, quoted;
 * everything else as a quoted, escaped string. Arrays become nested JSON arrays, one level per
 * dimension, elements joined by "," and lower bounds ignored ('[0:1]={1,2}' is [1,2]).
 *
 * Assumes extra_float_digits > 0 (PostgreSQL's default) and client_encoding UTF8 (node-postgres's).
 */
import { formatDate, formatTimestamp, formatTimestamptz } from './format-datetime';
import { formatFloat4, formatFloat8 } from './format-float';
import { formatNumeric } from './format-numeric';

export interface BinaryJsonOptions {
  /** The session's TimeZone setting, as current_setting('TimeZone') returns it (e.g. 'UTC', 'Etc/UTC', 'Europe/Berlin'). */
  readonly timeZone: string;
}

type Decoder = (bytes: Buffer, options: BinaryJsonOptions) => string;

const MAX_ARRAY_DIMENSIONS = 6; // PostgreSQL's MAXDIM

/** Type OID -> decoder of one binary value of that type. */
const SCALARS: ReadonlyMap<number, Decoder> = new Map<number, Decoder>([
  [16, (b) => (fixed(b, 1, 'bool')[0] === 0 ? 'false' : 'true')],
  [21, (b) => String(fixed(b, 2, 'int2').readInt16BE(0))],
  [23, (b) => String(fixed(b, 4, 'int4').readInt32BE(0))],
  [20, (b) => fixed(b, 8, 'int8').readBigInt64BE(0).toString()],
  [700, (b) => jsonNumber(formatFloat4(fixed(b, 4, 'float4')))],
  [701, (b) => jsonNumber(formatFloat8(fixed(b, 8, 'float8')))],
  [1700, (b) => jsonNumber(formatNumeric(b))],
  [25, jsonString], // text
  [1043, jsonString], // varchar
  [1042, jsonString], // bpchar: the padding is part of the value
  [19, jsonString], // name
  [2950, (b) => jsonUuid(fixed(b, 16, 'uuid'))],
  [114, (b) => b.toString('utf8')], // json: its text as stored, whitespace and all
  [3802, jsonb],
  [1082, (b) => `"${formatDate(b)}"`],
  [1114, (b) => `"${formatTimestamp(b)}"`],
  [1184, (b, options) => `"${formatTimestamptz(b, options.timeZone)}"`],
]);

/** Array type OID -> element type OID. */
const ARRAYS: ReadonlyMap<number, number> = new Map([
  [1000, 16],
  [1005, 21],
  [1007, 23],
  [1016, 20],
  [1021, 700],
  [1022, 701],
  [1231, 1700],
  [1009, 25],
  [1015, 1043],
  [1014, 1042],
  [1003, 19],
  [2951, 2950],
  [199, 114],
  [3807, 3802],
  [1182, 1082],
  [1115, 1114],
  [1185, 1184],
]);

/** JSON text for one binary-format value of type `typeOid`, as PostgreSQL's to_json(value)::text renders it. null -> 'null'. */
export function binaryToJson(typeOid: number, value: Buffer | null, options: BinaryJsonOptions): string {
  const scalar = SCALARS.get(typeOid);
  const element = scalar ? undefined : ARRAYS.get(typeOid);
  if (!scalar && element === undefined) throw new Error(`binaryToJson: type OID ${typeOid} is not binary-decodable`);
  if (value === null) return 'null';
  return scalar ? scalar(value, options) : arrayToJson(typeOid, element as number, value, options);
}

/** True when binaryToJson can decode this type OID (the gateway asks PostgreSQL for to_json(col) instead for others). */
export function isBinaryDecodable(typeOid: number): boolean {
  return SCALARS.has(typeOid) || ARRAYS.has(typeOid);
}

/**
 * array_send's layout: int32 ndim, int32 has-nulls flag, uint32 element OID, (int32 length,
 * int32 lower bound) per dimension, then each element in row-major order as int32 length (-1 for
 * NULL) and bytes. An empty array has ndim 0.
 */
function arrayToJson(arrayOid: number, elementOid: number, bytes: Buffer, options: BinaryJsonOptions): string {
  const ndim = bytes.readInt32BE(0);
  const declared = bytes.readUInt32BE(8);
  if (declared !== elementOid) throw new Error(`binary array of type OID ${arrayOid} declares element type OID ${declared}, expected ${elementOid}`);
  if (ndim === 0) return '[]';
  if (ndim < 0 || ndim > MAX_ARRAY_DIMENSIONS) throw new Error(`malformed binary array: ${ndim} dimensions`);
  const lengths: number[] = [];
  for (let i = 0; i < ndim; i++) lengths.push(bytes.readInt32BE(12 + 8 * i));
  const decode = SCALARS.get(elementOid) as Decoder;
  let offset = 12 + 8 * ndim;

  const dimension = (level: number): string => {
    const length = lengths[level] as number;
    const parts = new Array<string>(length);
    for (let i = 0; i < length; i++) {
      if (level + 1 < ndim) {
        parts[i] = dimension(level + 1);
        continue;
      }
      const size = bytes.readInt32BE(offset);
      offset += 4;
      if (size === -1) {
        parts[i] = 'null';
        continue;
      }
      if (size < 0 || offset + size > bytes.length) throw new Error(`malformed binary array: element of ${size} bytes at offset ${offset}`);
      parts[i] = decode(bytes.subarray(offset, offset + size), options);
      offset += size;
    }
    return `[${parts.join(',')}]`;
  };

  const json = dimension(0);
  if (offset !== bytes.length) throw new Error(`malformed binary array: ${bytes.length - offset} bytes after the last element`);
  return json;
}

function fixed(bytes: Buffer, length: number, type: string): Buffer {
  if (bytes.length !== length) throw new Error(`malformed binary ${type}: ${bytes.length} bytes, expected ${length}`);
  return bytes;
}

/** to_json quotes number texts that JSON has no number for. */
function jsonNumber(text: string): string {
  return text === 'NaN' || text === 'Infinity' || text === '-Infinity' ? `"${text}"` : text;
}

/**
 * PostgreSQL's escape_json and JSON.stringify agree on strings: \" \\ \b \f \n \r \t, \u00XX
 * (lowercase hex) for the other controls, everything else (DEL, '/', U+2028, non-ASCII) as is.
 * Lone surrogates, which JSON.stringify would escape, cannot come out of UTF-8.
 */
function jsonString(bytes: Buffer): string {
  return JSON.stringify(bytes.toString('utf8'));
}

function jsonUuid(bytes: Buffer): string {
  const hex = bytes.toString('hex');
  return `"${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}"`;
}

/** jsonb_send: a version byte (1) and the jsonb's text, which is what to_json(jsonb) returns. */
function jsonb(bytes: Buffer): string {
  if (bytes[0] !== 1) throw new Error(`unsupported binary jsonb version ${bytes[0] ?? '(empty value)'}`);
  return bytes.toString('utf8', 1);
}
