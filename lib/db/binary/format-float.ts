/**
 * float4 and float8 as PostgreSQL 12+ prints them (float4out/float8out with extra_float_digits > 0,
 * the default): the shortest decimal that reads back as the same float, found by PostgreSQL's port
 * of Ryu (src/common/f2s.c, d2s.c), laid out like printf's %g: fixed notation while the decimal
 * exponent is in [-4, 6) for float4 and [-4, 15) for float8, otherwise `d.ddde±XX`.
 *
 * In: the 4- or 8-byte IEEE 754 big-endian binary value. Out: PostgreSQL's text (`NaN`,
 * `Infinity`, `-Infinity`, `-0` included), not yet JSON.
 *
 * PostgreSQL builds Ryu without STRICTLY_SHORTEST, so a decimal lying exactly on the rounding
 * boundary between two floats is never chosen; JavaScript's Number#toString accepts it when the
 * significand is even (1e23 is `1e+23` in JavaScript, `9.999999999999999e+22` in PostgreSQL).
 * Hence the exact checks below. When two shortest candidates are equally close, both pick the
 * even one.
 */

/** A dyadic rational n * 2^j, with its value as a double when that is exact. */
interface Dyadic {
  /** A number when exact (float4: at most 26 bits), turned into a bigint only for exact comparisons. */
  readonly n: bigint | number;
  readonly j: number;
  readonly asNumber: number | undefined;
}

/** The open interval of decimals that read back as the float m * 2^e. */
interface RoundingInterval {
  readonly low: Dyadic;
  readonly center: Dyadic;
  readonly high: Dyadic;
  /** Twice the value, to find exact ties. */
  readonly twice: Dyadic;
}

/** float4 text of a 4-byte binary value. */
export function formatFloat4(bytes: Buffer): string {
  const value = bytes.readFloatBE(0);
  if (!Number.isFinite(value) || value === 0) return special(value);
  const bits = bytes.readUInt32BE(0);
  const biased = (bits >>> 23) & 0xff;
  const fraction = bits & 0x7fffff;
  const m = biased === 0 ? fraction : fraction + 0x800000;
  const e = biased === 0 ? -149 : biased - 150;
  // A float's bounds have at most 26 significant bits: every bound is exactly a double.
  const interval = roundingInterval(m, e, fraction === 0 && biased > 1, Math.abs(value));
  const [digits, k] = shortestInside(Math.abs(value), interval, 1, 9);
  return layout(value < 0, digits, k, 6);
}

/** float8 text of an 8-byte binary value. */
export function formatFloat8(bytes: Buffer): string {
  const value = bytes.readDoubleBE(0);
  if (!Number.isFinite(value) || value === 0) return special(value);
  const magnitude = Math.abs(value);
  let [digits, k] = trimZeros(...splitDecimal(String(magnitude)));
  const lo = bytes.readUInt32BE(4);
  // Number#toString's choice can only sit on a boundary when the significand is even and the
  // boundary is a short decimal, i.e. an integer (n * 2^j with j >= 0) below 10^40.
  if ((lo & 1) === 0 && magnitude >= 2 ** 53 && magnitude < 1e40) {
    const hi = bytes.readUInt32BE(0);
    const biased = (hi >>> 20) & 0x7ff;
    const fraction = (BigInt(hi & 0xfffff) << 32n) | BigInt(lo);
    const interval = roundingInterval(fraction | (1n << 52n), biased - 1075, fraction === 0n && biased > 1, magnitude);
    if (compare(digits, k, interval.low) === 0 || compare(digits, k, interval.high) === 0) {
      [digits, k] = shortestInside(magnitude, interval, digits.length, 17);
    }
  }
  return layout(value < 0, digits, k, 15);
}

function special(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Infinity) return 'Infinity';
  if (value === -Infinity) return '-Infinity';
  return Object.is(value, -0) ? '-0' : '0';
}

/** Float4 significands come as numbers (every bound is then exactly a double), float8 ones as bigints. */
function roundingInterval(m: number | bigint, e: number, narrowBelow: boolean, value: number): RoundingInterval {
  // k * m - c, times 2^j.
  const bound = (k: number, c: number, j: number): Dyadic =>
    typeof m === 'number' ? { n: k * m - c, j, asNumber: (k * m - c) * 2 ** j } : { n: BigInt(k) * m - BigInt(c), j, asNumber: undefined };
  return {
    // Below a power of two the next float down is half as far away (Ryu's mmShift).
    low: narrowBelow ? bound(4, 1, e - 2) : bound(2, 1, e - 1),
    center: { n: m, j: e, asNumber: value },
    high: bound(2, -1, e - 1),
    twice: { n: m, j: e + 1, asNumber: typeof m === 'number' ? 2 * value : undefined },
  };
}

/**
 * The shortest decimal strictly inside the interval, and of those the closest to the value, as
 * Ryu picks it. Some decimal of a length is inside iff the closest one on either side of the value
 * is (the interval is convex and holds the value), and a length that has one makes every longer
 * length have one, so the lengths are binary-searched.
 */
function shortestInside(value: number, interval: RoundingInterval, fromLength: number, toLength: number): [string, number] {
  let best: [string, number] | undefined;
  let low = fromLength;
  let high = toLength;
  while (low <= high) {
    const length = (low + high) >> 1;
    const found = closestInside(value, interval, length);
    if (found) {
      best = found;
      high = length - 1;
    } else {
      low = length + 1;
    }
  }
  if (!best) throw new Error(`no ${toLength}-digit decimal reads back as the float ${value}`);
  return best;
}

/**
 * The closest decimal of `length` significant digits inside the interval: the correctly rounded
 * one or its neighbour on the other side of the value (the interval is lopsided below powers of
 * two); when both are inside and the value lies exactly halfway, the even one, as Ryu rounds
 * (1328481.25::float4 is 1.3284812e+06).
 */
function closestInside(value: number, interval: RoundingInterval, length: number): [string, number] | undefined {
  const [digits, k] = splitDecimal(value.toExponential(length - 1));
  const side = compare(digits, k, interval.center);
  if (side === 0) return trimZeros(digits, k);
  const other = addUnit(digits, side < 0 ? 1 : -1);
  const candidateInside = inside(digits, k, interval);
  const otherInside = inside(other, k, interval);
  if (candidateInside && otherInside && compare(addDigits(digits, other), k, interval.twice) === 0) {
    return trimZeros(lastDigitEven(digits) ? digits : other, k);
  }
  if (candidateInside) return trimZeros(digits, k);
  if (otherInside) return trimZeros(other, k);
  return undefined;
}

function addUnit(digits: string, unit: 1 | -1): string {
  return digits.length < 16 ? String(Number(digits) + unit) : (BigInt(digits) + BigInt(unit)).toString();
}

function addDigits(a: string, b: string): string {
  return a.length < 16 ? String(Number(a) + Number(b)) : (BigInt(a) + BigInt(b)).toString();
}

function lastDigitEven(digits: string): boolean {
  return (digits.charCodeAt(digits.length - 1) & 1) === 0;
}

function inside(digits: string, k: number, interval: RoundingInterval): boolean {
  return compare(digits, k, interval.low) > 0 && compare(digits, k, interval.high) < 0;
}

/** Sign of digits * 10^k - bound, exact. */
function compare(digits: string, k: number, bound: Dyadic): number {
  if (bound.asNumber !== undefined) {
    // Rounding to double is monotonic and the bound is a double, so only equality is ambiguous.
    const approx = Number(`${digits}e${k}`);
    if (approx !== bound.asNumber) return approx < bound.asNumber ? -1 : 1;
  }
  let left = BigInt(digits);
  let right = BigInt(bound.n);
  if (k >= 0) left *= 10n ** BigInt(k);
  else right *= 10n ** BigInt(-k);
  if (bound.j >= 0) right <<= BigInt(bound.j);
  else left <<= BigInt(-bound.j);
  return left < right ? -1 : left > right ? 1 : 0;
}

/** A JavaScript number text ("123.45", "0.00012", "1.5e+21") as digits (trailing zeros kept) and k, value = digits * 10^k. */
function splitDecimal(text: string): [string, number] {
  const e = text.indexOf('e');
  const mantissa = e < 0 ? text : text.slice(0, e);
  let k = e < 0 ? 0 : Number(text.slice(e + 1));
  const dot = mantissa.indexOf('.');
  let digits = mantissa;
  if (dot >= 0) {
    digits = mantissa.slice(0, dot) + mantissa.slice(dot + 1);
    k -= mantissa.length - dot - 1;
  }
  let start = 0;
  while (start < digits.length - 1 && digits.charCodeAt(start) === 48) start++;
  return [start > 0 ? digits.slice(start) : digits, k];
}

function trimZeros(digits: string, k: number): [string, number] {
  let end = digits.length;
  while (end > 1 && digits.charCodeAt(end - 1) === 48) end--;
  return [end < digits.length ? digits.slice(0, end) : digits, k + digits.length - end];
}

/** Ryu's to_chars: fixed notation for decimal exponents in [-4, fixedBelow), else d.ddde±XX. */
function layout(negative: boolean, digits: string, k: number, fixedBelow: number): string {
  const exponent = k + digits.length - 1;
  let text: string;
  if (exponent >= -4 && exponent < fixedBelow) {
    if (exponent < 0) text = `0.${'0'.repeat(-exponent - 1)}${digits}`;
    else if (digits.length <= exponent + 1) text = digits + '0'.repeat(exponent + 1 - digits.length);
    else text = `${digits.slice(0, exponent + 1)}.${digits.slice(exponent + 1)}`;
  } else {
    const mantissa = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
    const magnitude = Math.abs(exponent);
    text = `${mantissa}e${exponent < 0 ? '-' : '+'}${magnitude < 10 ? '0' : ''}${magnitude}`;
  }
  return negative ? `-${text}` : text;
}
