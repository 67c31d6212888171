/**
 * numeric as numeric_out prints it, from numeric_send's binary form (src/backend/utils/adt/
 * numeric.c): int16 ndigits, int16 weight, uint16 sign, int16 dscale, then ndigits base-10000
 * digits, the first worth 10000^weight. Exact: the digits are copied, never through a number.
 *
 * In: the binary value. Out: PostgreSQL's text (`NaN`, `Infinity`, `-Infinity` included), with
 * exactly dscale fractional digits, as get_str_from_var writes them.
 */

const NUMERIC_POS = 0x0000;
const NUMERIC_NEG = 0x4000;
const NUMERIC_NAN = 0xc000;
const NUMERIC_PINF = 0xd000; // PostgreSQL 14+
const NUMERIC_NINF = 0xf000;

/** numeric text of a binary numeric value. */
export function formatNumeric(bytes: Buffer): string {
  const ndigits = bytes.readInt16BE(0);
  const weight = bytes.readInt16BE(2);
  const sign = bytes.readUInt16BE(4);
  const dscale = bytes.readInt16BE(6);
  if (sign === NUMERIC_NAN) return 'NaN';
  if (sign === NUMERIC_PINF) return 'Infinity';
  if (sign === NUMERIC_NINF) return '-Infinity';
  if ((sign !== NUMERIC_POS && sign !== NUMERIC_NEG) || ndigits < 0 || dscale < 0 || bytes.length !== 8 + 2 * ndigits) {
    throw new Error(`malformed binary numeric (${bytes.length} bytes, ndigits ${ndigits}, sign 0x${sign.toString(16)}, dscale ${dscale})`);
  }
  const digit = (i: number): number => {
    if (i < 0 || i >= ndigits) return 0;
    const n = bytes.readInt16BE(8 + 2 * i);
    if (n < 0 || n > 9999) throw new Error(`malformed binary numeric: base-10000 digit ${n}`);
    return n;
  };
  const parts: string[] = [];
  if (sign === NUMERIC_NEG) parts.push('-');
  let d: number;
  if (weight < 0) {
    d = weight + 1;
    parts.push('0');
  } else {
    // The first base-10000 digit without its leading zeros, the others padded to four.
    parts.push(String(digit(0)));
    for (d = 1; d <= weight; d++) parts.push(pad4(digit(d)));
  }
  if (dscale > 0) {
    parts.push('.');
    const whole = Math.floor(dscale / 4);
    for (let i = 0; i < whole; i++, d++) parts.push(pad4(digit(d)));
    if (dscale % 4 !== 0) parts.push(pad4(digit(d)).slice(0, dscale % 4));
  }
  return parts.join('');
}

function pad4(n: number): string {
  return n >= 1000 ? String(n) : n >= 100 ? `0${n}` : n >= 10 ? `00${n}` : `000${n}`;
}
