/**
 * date, timestamp and timestamptz as to_json writes them (JsonEncodeDateTime, ISO 8601 / XSD
 * style in src/backend/utils/adt/json.c and datetime.c), from their binary forms: int32 days and
 * int64 microseconds since 2000-01-01 (UTC for timestamptz), INT_MAX / INT_MIN for +-infinity.
 *
 * Out: the text without JSON quotes: `2024-01-02`, `2024-01-02T03:04:05.123456`,
 * `2024-01-02T03:04:05.5+05:30`; fractional zeros dropped; `infinity` / `-infinity`; the year at
 * least four digits (`0044`, `20000`) and BC years as ` BC` after everything (year 0 is 1 BC); the
 * offset as +hh:mm, with :ss when it has seconds (LMT). Dates are proleptic Gregorian.
 */
import { utcOffsetSeconds } from './utc-offset';

const POSTGRES_EPOCH_JDATE = 2_451_545; // Julian day of 2000-01-01
const UNIX_EPOCH_DAYS = 10_957; // 1970-01-01 to 2000-01-01
const US_PER_DAY = 86_400_000_000;
const US_PER_DAY_BIG = 86_400_000_000n;

/** date text of an int32 binary date. */
export function formatDate(bytes: Buffer): string {
  expectLength(bytes, 4, 'date');
  const days = bytes.readInt32BE(0);
  if (days === 0x7fffffff) return 'infinity';
  if (days === -0x80000000) return '-infinity';
  const [year, month, day] = civilDate(days);
  return year > 0 ? `${pad(year, 4)}-${pad(month, 2)}-${pad(day, 2)}` : `${pad(1 - year, 4)}-${pad(month, 2)}-${pad(day, 2)} BC`;
}

/** timestamp (without time zone) text of an int64 binary timestamp. */
export function formatTimestamp(bytes: Buffer): string {
  const instant = decodeTimestamp(bytes);
  return typeof instant === 'string' ? instant : render(instant[0], instant[1], undefined);
}

/** timestamptz text of an int64 binary timestamptz, in `timeZone` with its offset at that instant. */
export function formatTimestamptz(bytes: Buffer, timeZone: string): string {
  const instant = decodeTimestamp(bytes);
  if (typeof instant === 'string') return instant;
  let [days, us] = instant;
  // PostgreSQL looks the offset up at the whole second (timestamp2tm drops fsec first).
  const offset = utcOffsetSeconds(timeZone, (days + UNIX_EPOCH_DAYS) * 86_400_000 + Math.floor(us / 1000));
  us += offset * 1_000_000;
  if (us < 0) {
    us += US_PER_DAY;
    days -= 1;
  } else if (us >= US_PER_DAY) {
    us -= US_PER_DAY;
    days += 1;
  }
  return render(days, us, offset);
}

/** Days since 2000-01-01 and microseconds into that day, or the infinity text. */
function decodeTimestamp(bytes: Buffer): [number, number] | string {
  expectLength(bytes, 8, 'timestamp');
  const hi = bytes.readInt32BE(0);
  const lo = bytes.readUInt32BE(4);
  if (hi === 0x7fffffff && lo === 0xffffffff) return 'infinity';
  if (hi === -0x80000000 && lo === 0) return '-infinity';
  if (hi >= -0x200000 && hi < 0x200000) {
    // |value| < 2^53: exact as a double, and % is exact (within about 285 years of 2000).
    const value = hi * 4_294_967_296 + lo;
    let us = value % US_PER_DAY;
    let days = (value - us) / US_PER_DAY;
    if (us < 0) {
      us += US_PER_DAY;
      days -= 1;
    }
    return [days, us];
  }
  const value = bytes.readBigInt64BE(0);
  let us = value % US_PER_DAY_BIG;
  let days = value / US_PER_DAY_BIG;
  if (us < 0n) {
    us += US_PER_DAY_BIG;
    days -= 1n;
  }
  return [Number(days), Number(us)];
}

function render(days: number, us: number, offset: number | undefined): string {
  const [year, month, day] = civilDate(days);
  const seconds = Math.floor(us / 1_000_000);
  let text = `${pad(year > 0 ? year : 1 - year, 4)}-${pad(month, 2)}-${pad(day, 2)}T${pad(Math.floor(seconds / 3600), 2)}:${pad(Math.floor(seconds / 60) % 60, 2)}:${pad(seconds % 60, 2)}`;
  let fraction = us % 1_000_000;
  if (fraction !== 0) {
    let width = 6;
    while (fraction % 10 === 0) {
      fraction /= 10;
      width--;
    }
    text += `.${pad(fraction, width)}`;
  }
  if (offset !== undefined) {
    const abs = Math.abs(offset);
    text += `${offset >= 0 ? '+' : '-'}${pad(Math.floor(abs / 3600), 2)}:${pad(Math.floor(abs / 60) % 60, 2)}`;
    if (abs % 60 !== 0) text += `:${pad(abs % 60, 2)}`;
  }
  return year > 0 ? text : `${text} BC`;
}

/**
 * Astronomical year (0 = 1 BC), month and day of a day count since 2000-01-01: PostgreSQL's
 * j2date (src/backend/utils/adt/datetime.c) on the Julian day number, step for step.
 */
function civilDate(days: number): [number, number, number] {
  let julian = days + POSTGRES_EPOCH_JDATE + 32044;
  // j2date works in unsigned arithmetic from here; PostgreSQL never gets this far below 4714 BC.
  if (julian < 0) throw new Error(`date out of range: ${days} days from 2000-01-01`);
  let quad = Math.floor(julian / 146_097);
  const extra = (julian - quad * 146_097) * 4 + 3;
  julian += 60 + quad * 3 + Math.floor(extra / 146_097);
  quad = Math.floor(julian / 1461);
  julian -= quad * 1461;
  let y = Math.floor((julian * 4) / 1461);
  julian = (y !== 0 ? (julian + 305) % 365 : (julian + 306) % 366) + 123;
  y += quad * 4;
  quad = Math.floor((julian * 2141) / 65536);
  return [y - 4800, ((quad + 10) % 12) + 1, julian - Math.floor((7834 * quad) / 256)];
}

function pad(n: number, width: number): string {
  const text = String(n);
  return text.length >= width ? text : '0'.repeat(width - text.length) + text;
}

function expectLength(bytes: Buffer, length: number, type: string): void {
  if (bytes.length !== length) throw new Error(`malformed binary ${type}: ${bytes.length} bytes, expected ${length}`);
}
