/**
 * binaryToJson on hand-built binary values. Every expected text here was checked against
 * PostgreSQL 18's to_json(value)::text; __tests__/integration/binary-to-json.test.ts repeats the
 * comparison against the live server.
 */
import { binaryToJson, isBinaryDecodable } from '../../../lib/db/binary/binary-to-json';

const UTC = { timeZone: 'UTC' };

const int16 = (n: number) => {
  const b = Buffer.alloc(2);
  b.writeInt16BE(n);
  return b;
};
const int32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeInt32BE(n);
  return b;
};
const int64 = (n: bigint) => {
  const b = Buffer.alloc(8);
  b.writeBigInt64BE(n);
  return b;
};
const float4 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeFloatBE(n);
  return b;
};
const float8 = (n: number) => {
  const b = Buffer.alloc(8);
  b.writeDoubleBE(n);
  return b;
};
const utf8 = (s: string) => Buffer.from(s, 'utf8');

/** numeric_send: ndigits, weight, sign, dscale, base-10000 digits. */
function numeric(digits: number[], weight: number, dscale: number, sign = 0): Buffer {
  const b = Buffer.alloc(8 + 2 * digits.length);
  b.writeInt16BE(digits.length, 0);
  b.writeInt16BE(weight, 2);
  b.writeUInt16BE(sign, 4);
  b.writeInt16BE(dscale, 6);
  digits.forEach((d, i) => b.writeInt16BE(d, 8 + 2 * i));
  return b;
}

/** array_send: ndim, has-nulls, element OID, (length, lower bound) per dimension, elements. */
function array(elementOid: number, dims: Array<[number, number]>, elements: Array<Buffer | null>): Buffer {
  const head = Buffer.alloc(12 + 8 * dims.length);
  head.writeInt32BE(dims.length, 0);
  head.writeInt32BE(elements.includes(null) ? 1 : 0, 4);
  head.writeUInt32BE(elementOid, 8);
  dims.forEach(([length, lower], i) => {
    head.writeInt32BE(length, 12 + 8 * i);
    head.writeInt32BE(lower, 16 + 8 * i);
  });
  return Buffer.concat([head, ...elements.map((e) => (e === null ? int32(-1) : Buffer.concat([int32(e.length), e])))]);
}

/** Days from 2000-01-01 to a proleptic Gregorian date (astronomical year: 0 is 1 BC). */
function days(year: number, month: number, day: number): number {
  // Howard Hinnant's days_from_civil (not PostgreSQL's date2j, so the test is independent of it).
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146_097 + doe - 719_468 - 10_957;
}

/** Microseconds from 2000-01-01 00:00 UTC. */
function micros(year: number, month: number, day: number, h = 0, m = 0, s = 0, us = 0): bigint {
  return (BigInt(days(year, month, day)) * 86_400n + BigInt(h * 3600 + m * 60 + s)) * 1_000_000n + BigInt(us);
}

describe('binaryToJson: scalars', () => {
  it.each([
    ['bool true', 16, Buffer.from([1]), 'true'],
    ['bool false', 16, Buffer.from([0]), 'false'],
    ['int2', 21, int16(-32768), '-32768'],
    ['int4', 23, int32(-2147483648), '-2147483648'],
    ['int8 max, beyond 2^53', 20, int64(9223372036854775807n), '9223372036854775807'],
    ['int8 min', 20, int64(-9223372036854775808n), '-9223372036854775808'],
    ['int8 2^53 + 1', 20, int64(9007199254740993n), '9007199254740993'],
    ['uuid', 2950, Buffer.from('a0eebc999c0b4ef8bb6d6bb9bd380a11', 'hex'), '"a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"'],
  ])('%s', (_name, oid, bytes, expected) => {
    expect(binaryToJson(oid, bytes, UTC)).toBe(expected);
  });

  it('gives null for NULL', () => {
    expect(binaryToJson(23, null, UTC)).toBe('null');
  });
});

describe('binaryToJson: float8 prints the shortest round-trip text, laid out like PostgreSQL', () => {
  it.each([
    [0.1, '0.1'],
    [100, '100'],
    [-1.5, '-1.5'],
    [1e14, '100000000000000'],
    [1e15, '1e+15'], // fixed notation ends at exponent 15, not at JavaScript's 21
    [1e21, '1e+21'],
    [1.5e300, '1.5e+300'],
    [123456789012345680000, '1.2345678901234568e+20'],
    [0.0001, '0.0001'],
    [1e-5, '1e-05'], // two-digit exponent
    [1e-7, '1e-07'],
    [5e-324, '5e-324'],
    [1.7976931348623157e308, '1.7976931348623157e+308'],
    [0, '0'],
    [-0, '-0'],
    // 1e23 lies exactly on the boundary between two doubles: JavaScript accepts it, Ryu as built
    // in PostgreSQL does not.
    [1e23, '9.999999999999999e+22'],
    [9.5e21, '9.500000000000001e+21'],
    // Halfway between two shortest candidates: the even one.
    [600000000000000.25, '600000000000000.2'],
    [600000000000000.75, '600000000000000.8'],
  ])('%p -> %s', (value, expected) => {
    expect(binaryToJson(701, float8(value), UTC)).toBe(expected);
  });

  it.each([
    [NaN, '"NaN"'],
    [Infinity, '"Infinity"'],
    [-Infinity, '"-Infinity"'],
  ])('quotes %p, which JSON has no number for', (value, expected) => {
    expect(binaryToJson(701, float8(value), UTC)).toBe(expected);
  });
});

describe('binaryToJson: float4 prints the shortest text that reads back as the float4', () => {
  it.each([
    [0.1, '0.1'],
    [0.3, '0.3'],
    [123456, '123456'],
    [1e6, '1e+06'], // fixed notation ends at exponent 6 for float4
    [1234567, '1.234567e+06'],
    [16777216, '1.6777216e+07'],
    [0.0001, '0.0001'],
    [1e-5, '1e-05'],
    [3.4028234663852886e38, '3.4028235e+38'],
    [1.401298464324817e-45, '1e-45'],
    [1.1754943508222875e-38, '1.1754944e-38'],
    // 2^87: the interval is lopsided below a power of two, the shortest candidate is above.
    [2 ** 87, '1.5474251e+26'],
    // Exactly halfway between two 8-digit candidates: the even one.
    [1328481.25, '1.3284812e+06'],
    [52893.8125, '52893.812'],
    [-0, '-0'],
    [NaN, '"NaN"'],
    [-Infinity, '"-Infinity"'],
  ])('%p -> %s', (value, expected) => {
    expect(binaryToJson(700, float4(value), UTC)).toBe(expected);
  });
});

describe('binaryToJson: numeric is exact and keeps its display scale', () => {
  it.each([
    ['1.50', numeric([1, 5000], 0, 2), '1.50'],
    ['0.000', numeric([], 0, 3), '0.000'],
    ['-12.3456', numeric([12, 3456], 0, 4, 0x4000), '-12.3456'],
    ['0.12345 (dscale not a multiple of 4)', numeric([1234, 5000], -1, 5), '0.12345'],
    ['1e-20', numeric([1], -5, 20), '0.00000000000000000001'],
    ['1e20', numeric([1], 5, 0), '100000000000000000000'],
    ['10000', numeric([1], 1, 0), '10000'],
    ['more digits than a double', numeric([1234, 5678, 9012, 3456, 7890, 1234], 2, 12), '123456789012.345678901234'],
    ['NaN', numeric([], 0, 0, 0xc000), '"NaN"'],
    ['Infinity', numeric([], 0, 0, 0xd000), '"Infinity"'],
    ['-Infinity', numeric([], 0, 0, 0xf000), '"-Infinity"'],
  ])('%s', (_name, bytes, expected) => {
    expect(binaryToJson(1700, bytes, UTC)).toBe(expected);
  });

  it('rejects a digit outside base 10000', () => {
    expect(() => binaryToJson(1700, numeric([10000], 0, 0), UTC)).toThrow(/base-10000 digit 10000/);
  });
});

describe('binaryToJson: strings', () => {
  it('escapes like escape_json: short escapes, \\u00XX in lowercase for other controls, the rest as is', () => {
    const text = 'a\nb\u0001"\\/\t\r\b\f\u000b\u001f\u007f é 😀\u2028';
    const expected = '"a\\nb\\u0001\\"\\\\/\\t\\r\\b\\f\\u000b\\u001f\u007f é 😀\u2028"';
    for (const oid of [25, 1043, 19]) expect(binaryToJson(oid, utf8(text), UTC)).toBe(expected);
  });

  it('keeps bpchar padding, as bpchar_send and to_json do', () => {
    expect(binaryToJson(1042, utf8('ab  '), UTC)).toBe('"ab  "');
  });

  it('returns json text unchanged, whitespace included', () => {
    expect(binaryToJson(114, utf8('{"a" : 1, "b":[1, 2]}'), UTC)).toBe('{"a" : 1, "b":[1, 2]}');
  });

  it('returns jsonb text after its version byte', () => {
    expect(binaryToJson(3802, Buffer.concat([Buffer.from([1]), utf8('{"a": 1, "b": [1, 2]}')]), UTC)).toBe('{"a": 1, "b": [1, 2]}');
    expect(() => binaryToJson(3802, Buffer.concat([Buffer.from([2]), utf8('{}')]), UTC)).toThrow(/jsonb version 2/);
  });
});

describe('binaryToJson: date and timestamp', () => {
  it.each([
    ['2024-01-02', days(2024, 1, 2), '"2024-01-02"'],
    ['the epoch', 0, '"2000-01-01"'],
    ['0001-01-01 BC is year 0', days(0, 1, 1), '"0001-01-01 BC"'],
    ['4713-01-01 BC', days(-4712, 1, 1), '"4713-01-01 BC"'],
    ['the first date, Julian day 0', -2_451_545, '"4714-11-24 BC"'],
    ['years beyond 9999', days(10000, 1, 1), '"10000-01-01"'],
    ['the last date (5874897-12-31, Julian day 2147483493)', 2_145_031_948, '"5874897-12-31"'],
    ['infinity', 0x7fffffff, '"infinity"'],
    ['-infinity', -0x80000000, '"-infinity"'],
  ])('date %s', (_name, value, expected) => {
    expect(binaryToJson(1082, int32(value), UTC)).toBe(expected);
  });

  it.each([
    ['microseconds', micros(2024, 1, 2, 3, 4, 5, 123456), '"2024-01-02T03:04:05.123456"'],
    ['trailing fractional zeros dropped', micros(2024, 1, 2, 3, 4, 5, 100000), '"2024-01-02T03:04:05.1"'],
    ['no fraction', micros(2024, 1, 2, 3, 4, 5), '"2024-01-02T03:04:05"'],
    ['before 2000', micros(1969, 12, 31, 23, 59, 59, 999999), '"1969-12-31T23:59:59.999999"'],
    ['BC', micros(-4712, 1, 1), '"4713-01-01T00:00:00 BC"'],
    ['the first timestamp', micros(-4713, 11, 24), '"4714-11-24T00:00:00 BC"'],
    ['infinity', 9223372036854775807n, '"infinity"'],
    ['-infinity', -9223372036854775808n, '"-infinity"'],
  ])('timestamp %s', (_name, value, expected) => {
    expect(binaryToJson(1114, int64(value), UTC)).toBe(expected);
  });

  it('timestamp: the last one, beyond 2^53 microseconds and beyond JavaScript\'s Date', () => {
    // 294277-01-01 00:00 (Julian day 109203528, PostgreSQL's END_TIMESTAMP) less one microsecond.
    const last = (109_203_528n - 2_451_545n) * 86_400_000_000n - 1n;
    expect(binaryToJson(1114, int64(last), UTC)).toBe('"294276-12-31T23:59:59.999999"');
  });
});

describe('binaryToJson: timestamptz in the session TimeZone', () => {
  it.each([
    ['UTC', 'UTC', micros(2024, 1, 2, 3, 4, 5, 123456), '"2024-01-02T03:04:05.123456+00:00"'],
    ['Etc/UTC', 'Etc/UTC', micros(2024, 1, 1), '"2024-01-01T00:00:00+00:00"'],
    ['the instant before Berlin springs forward', 'Europe/Berlin', micros(2024, 3, 31, 0, 59, 59, 999999), '"2024-03-31T01:59:59.999999+01:00"'],
    ['the instant Berlin springs forward', 'Europe/Berlin', micros(2024, 3, 31, 1), '"2024-03-31T03:00:00+02:00"'],
    ['Berlin, the first 02:30 of the autumn change', 'Europe/Berlin', micros(2024, 10, 27, 0, 30), '"2024-10-27T02:30:00+02:00"'],
    ['Berlin, the second 02:30', 'Europe/Berlin', micros(2024, 10, 27, 1, 30), '"2024-10-27T02:30:00+01:00"'],
    ['half-hour offset', 'Asia/Kolkata', micros(2024, 1, 2, 3, 4, 5, 123456), '"2024-01-02T08:34:05.123456+05:30"'],
    ['negative half-hour offset, crossing midnight', 'America/St_Johns', micros(2024, 1, 2, 3, 4, 5, 500000), '"2024-01-01T23:34:05.5-03:30"'],
    ['LMT with seconds', 'Europe/Berlin', micros(1890, 1, 1), '"1890-01-01T00:53:28+00:53:28"'],
    ['negative LMT with seconds', 'America/St_Johns', micros(1890, 1, 1), '"1889-12-31T20:29:08-03:30:52"'],
    ['Abidjan LMT', 'Africa/Abidjan', micros(1890, 1, 1), '"1889-12-31T23:43:52-00:16:08"'],
    ['BC goes after the offset', 'Europe/Berlin', micros(-43, 3, 15), '"0044-03-15T00:53:28+00:53:28 BC"'],
    ['local time before the first timestamp', 'America/New_York', micros(-4713, 11, 24), '"4714-11-23T19:03:58-04:56:02 BC"'],
    ['beyond Date: the 400-year cycle', 'Europe/Berlin', micros(294276, 7, 1), '"294276-07-01T02:00:00+02:00"'],
    ['POSIX sign: +05:30 is west of Greenwich', '+05:30', micros(2024, 1, 1), '"2023-12-31T18:30:00-05:30"'],
    ['SET TIME ZONE -7', '<-07>+07', micros(2024, 7, 1), '"2024-06-30T17:00:00-07:00"'],
    ['SET TIME ZONE 5.75', '<+05:45>-05:45', micros(2024, 7, 1), '"2024-07-01T05:45:00+05:45"'],
    ['POSIX UTC+3', 'UTC+3', micros(2024, 7, 1), '"2024-06-30T21:00:00-03:00"'],
    ['POSIX with minutes', 'ABC-2:15', micros(2024, 7, 1), '"2024-07-01T02:15:00+02:15"'],
    ['infinity ignores the zone', 'Mars/Olympus_Mons', 9223372036854775807n, '"infinity"'],
  ])('%s (%s)', (_name, timeZone, value, expected) => {
    expect(binaryToJson(1184, int64(value), { timeZone })).toBe(expected);
  });

  it.each(['Mars/Olympus_Mons', 'Factory', 'XYZ5ABC'])('throws for a zone it cannot resolve: %s', (timeZone) => {
    expect(() => binaryToJson(1184, int64(0n), { timeZone })).toThrow(`unsupported time zone "${timeZone}"`);
  });

  it('gives each instant of a day with a transition its own offset (the per-day cache must not blur them)', () => {
    const zone = { timeZone: 'Europe/Berlin' };
    const texts = [0, 30, 59, 60, 61, 120].map((minute) => binaryToJson(1184, int64(micros(2024, 3, 31, 0, minute)), zone));
    expect(texts).toEqual([
      '"2024-03-31T01:00:00+01:00"',
      '"2024-03-31T01:30:00+01:00"',
      '"2024-03-31T01:59:00+01:00"',
      '"2024-03-31T03:00:00+02:00"',
      '"2024-03-31T03:01:00+02:00"',
      '"2024-03-31T04:00:00+02:00"',
    ]);
  });
});

describe('binaryToJson: arrays', () => {
  it('nests one JSON array per dimension, "," between elements, null for NULL', () => {
    const bytes = array(23, [[2, 1], [2, 1]], [int32(1), int32(2), int32(3), null]);
    expect(binaryToJson(1007, bytes, UTC)).toBe('[[1,2],[3,null]]');
  });

  it('ignores lower bounds, as to_json does', () => {
    expect(binaryToJson(1007, array(23, [[2, 0]], [int32(1), int32(2)]), UTC)).toBe('[1,2]');
    expect(binaryToJson(1007, array(23, [[2, 2], [1, -5]], [int32(1), int32(2)]), UTC)).toBe('[[1],[2]]');
  });

  it('renders an empty array (no dimensions) as []', () => {
    expect(binaryToJson(1007, array(23, [], []), UTC)).toBe('[]');
  });

  it('renders three dimensions', () => {
    const bytes = array(21, [[2, 1], [1, 1], [2, 1]], [int16(1), int16(2), int16(3), int16(4)]);
    expect(binaryToJson(1005, bytes, UTC)).toBe('[[[1,2]],[[3,4]]]');
  });

  it('renders elements as their scalars do: strings escaped, json raw, numbers quoted when not finite', () => {
    expect(binaryToJson(1009, array(25, [[3, 1]], [utf8('a b'), utf8('c"d'), null]), UTC)).toBe('["a b","c\\"d",null]');
    expect(binaryToJson(199, array(114, [[2, 1]], [utf8('{"a": 1}'), null]), UTC)).toBe('[{"a": 1},null]');
    expect(binaryToJson(3807, array(3802, [[1, 1]], [Buffer.concat([Buffer.from([1]), utf8('[1, 2]')])]), UTC)).toBe('[[1, 2]]');
    expect(binaryToJson(1231, array(1700, [[2, 1]], [numeric([1, 5000], 0, 2), numeric([], 0, 0, 0xc000)]), UTC)).toBe('[1.50,"NaN"]');
    expect(binaryToJson(1022, array(701, [[2, 1]], [float8(1e21), float8(-0)]), UTC)).toBe('[1e+21,-0]');
  });

  it('renders timestamptz elements in the session zone', () => {
    const bytes = array(1184, [[2, 1]], [int64(micros(2024, 7, 1)), int64(-9223372036854775808n)]);
    expect(binaryToJson(1185, bytes, { timeZone: 'Asia/Kolkata' })).toBe('["2024-07-01T05:30:00+05:30","-infinity"]');
  });

  it('rejects an element type that does not belong to the array type', () => {
    expect(() => binaryToJson(1007, array(20, [[1, 1]], [int64(1n)]), UTC)).toThrow(/declares element type OID 20, expected 23/);
  });

  it('rejects bytes after the last element and elements running past the end', () => {
    const bytes = array(23, [[1, 1]], [int32(1)]);
    expect(() => binaryToJson(1007, Buffer.concat([bytes, Buffer.from([0])]), UTC)).toThrow(/1 bytes after the last element/);
    expect(() => binaryToJson(1007, bytes.subarray(0, bytes.length - 1), UTC)).toThrow(/malformed binary array/);
  });
});

describe('isBinaryDecodable and unsupported types', () => {
  it('covers the contract list, scalars and their arrays', () => {
    const oids = [16, 21, 23, 20, 700, 701, 1700, 25, 1043, 1042, 19, 2950, 114, 3802, 1082, 1114, 1184];
    const arrays = [1000, 1005, 1007, 1016, 1021, 1022, 1231, 1009, 1015, 1014, 1003, 2951, 199, 3807, 1182, 1115, 1185];
    for (const oid of [...oids, ...arrays]) expect(isBinaryDecodable(oid)).toBe(true);
  });

  it.each([17 /* bytea */, 1186 /* interval */, 1083 /* time */, 0])('says no to OID %i, and binaryToJson throws naming it, even for NULL', (oid) => {
    expect(isBinaryDecodable(oid)).toBe(false);
    expect(() => binaryToJson(oid, Buffer.alloc(4), UTC)).toThrow(`type OID ${oid} is not binary-decodable`);
    expect(() => binaryToJson(oid, null, UTC)).toThrow(`type OID ${oid} is not binary-decodable`);
  });

  it('rejects a fixed-size value of the wrong length (e.g. a text-format value)', () => {
    expect(() => binaryToJson(23, utf8('123'), UTC)).toThrow('malformed binary int4: 3 bytes, expected 4');
    expect(() => binaryToJson(1184, int32(0), UTC)).toThrow('malformed binary timestamp: 4 bytes, expected 8');
  });
});
