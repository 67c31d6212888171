/**
 * binaryToJson against the live server: for each SQL expression, the binary value PostgreSQL
 * sends (extended protocol, binary result format) must render exactly as
 * `SELECT to_json(<expr>)::text` does, in the session TimeZone read back with
 * current_setting('TimeZone').
 *
 * node-postgres decodes every DataRow field as UTF-8 text, binary ones included, so bytes >= 0x80
 * come back replaced (the first test shows it). The binary values are therefore read off the
 * client's socket by the gateway's BinaryRowTap (lib/db/binary-row-tap.ts), which frames the
 * backend messages itself; node-postgres still runs the queries and reads the column type OIDs.
 */
import pg from 'pg';
import { binaryToJson, isBinaryDecodable } from '../../lib/db/binary/binary-to-json';
import { BinaryRowTap, type Stream } from '../../lib/db/binary-row-tap';
import { createTestDatabase } from '../support/test-database';

/** Hands node-postgres's own field values through untouched. */
const RAW_TYPES = { getTypeParser: () => (value: unknown) => value } as unknown as pg.CustomTypesConfig;

let db: Awaited<ReturnType<typeof createTestDatabase>>;
let client: pg.Client;

beforeAll(async () => {
  db = await createTestDatabase();
  client = new pg.Client({ connectionString: db.adminUrl });
  await client.connect();
});
afterAll(async () => {
  await client?.end();
  await db?.drop();
});

/** Binary result rows of a query: the column type OIDs and each row's raw fields. */
async function binaryRows(text: string, values: unknown[] = []): Promise<{ oids: number[]; rows: Array<Array<Buffer | null>> }> {
  // Attached after connect(): the stream is then the one queries use (the TLS one, with SSL).
  const tap = new BinaryRowTap((client as unknown as { connection: { stream: Stream } }).connection.stream);
  const config = { text, values, binary: true, queryMode: 'extended', types: RAW_TYPES } as pg.QueryConfig;
  const result = await client.query(config);
  expect(result.fields.map((f) => f.format)).toEqual(result.fields.map(() => 'binary'));
  const rows = tap.rows;
  expect(rows).toHaveLength(result.rowCount ?? 0);
  return { oids: result.fields.map((f) => f.dataTypeID), rows };
}

async function sessionTimeZone(): Promise<string> {
  return (await client.query<{ tz: string }>("SELECT current_setting('TimeZone') AS tz")).rows[0]!.tz;
}

/** [to_json text, binaryToJson of the binary value] for one expression, in the current session. */
async function bothWays(expression: string): Promise<[string | null, string]> {
  const text = await client.query<{ j: string | null }>(`SELECT to_json(${expression})::text AS j`);
  const { oids, rows } = await binaryRows(`SELECT ${expression}`);
  const oid = oids[0]!;
  expect({ expression, oid, decodable: isBinaryDecodable(oid) }).toEqual({ expression, oid, decodable: true });
  return [text.rows[0]!.j ?? 'null', binaryToJson(oid, rows[0]![0]!, { timeZone: await sessionTimeZone() })];
}

it('node-postgres decodes binary fields as UTF-8 text (why the values are read off the socket)', async () => {
  const { rows } = await binaryRows('SELECT 128::int4 AS v');
  const result = await client.query({ text: 'SELECT 128::int4 AS v', values: [], binary: true, queryMode: 'extended', types: RAW_TYPES } as pg.QueryConfig);
  expect(rows[0]![0]).toEqual(Buffer.from([0, 0, 0, 0x80]));
  expect(Buffer.from(result.rows[0].v as string | Buffer)).not.toEqual(Buffer.from([0, 0, 0, 0x80]));
});

const EXPRESSIONS: string[] = [
  // bool, integers: int8 beyond 2^53 stays exact
  'true',
  'false',
  'NULL::int4',
  "'-32768'::int2",
  "'2147483647'::int4",
  "'9223372036854775807'::int8",
  "'-9223372036854775808'::int8",
  "'9007199254740993'::int8",
  // numeric: exact, display scale kept, non-finite quoted
  "'1.50'::numeric",
  "'NaN'::numeric",
  "'Infinity'::numeric",
  "'-Infinity'::numeric",
  "'-0.000'::numeric",
  '0::numeric',
  "'123456789012345678901234567890.123456789012345678901234567890'::numeric",
  '1e-20::numeric',
  '1e20::numeric',
  "'-12.3456'::numeric",
  '10000::numeric',
  '0.0001::numeric',
  '1::numeric / 3',
  "'1e100'::numeric",
  '2::numeric ^ 200',
  // float8: shortest round trip, PostgreSQL's layout
  '0.1::float8',
  '1e21::float8',
  '1e-7::float8',
  "'-0'::float8",
  "'NaN'::float8",
  "'Infinity'::float8",
  "'-Infinity'::float8",
  '1e14::float8',
  '1e15::float8',
  '0.0001::float8',
  '1e-5::float8',
  "'1e23'::float8",
  "'5e-324'::float8",
  "'1.7976931348623157e308'::float8",
  '600000000000000.25::float8',
  '600000000000000.75::float8',
  '123456789012345680000::float8',
  'pi()',
  // float4: shortest for float4
  '0.1::float4',
  '1e6::float4',
  '123456::float4',
  '16777216::float4',
  "'3.4028235e38'::float4",
  "'1e-45'::float4",
  "'-0'::float4",
  "'NaN'::float4",
  "'-Infinity'::float4",
  "'1328481.25'::float4",
  '(2::float8 ^ 87)::float4',
  // strings
  `E'a\\nb\\u0001"\\\\/\\t\\r\\b\\f'::text`,
  "(SELECT string_agg(chr(i), '' ORDER BY i) FROM generate_series(1, 127) i)",
  "'é 😀 ' || chr(8232) || chr(65279)",
  "'ab'::varchar(5)",
  "'ab'::char(4)",
  "'abc'::name",
  "'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid",
  `'{"a" : 1, "b":[1, 2]}'::json`,
  `'{"b":[1, 2], "a" : 1, "c": "é\\n"}'::jsonb`,
  "'null'::jsonb",
  "'[]'::json",
  // date and timestamp
  "'2024-01-02'::date",
  "'4713-01-01 BC'::date",
  "'4714-11-24 BC'::date",
  "'0001-01-01 BC'::date",
  "'10000-01-01'::date",
  "'5874897-12-31'::date",
  "'1582-10-10'::date",
  "'infinity'::date",
  "'-infinity'::date",
  "'2024-01-02 03:04:05.123456'::timestamp",
  "'2024-01-02 03:04:05.1'::timestamp",
  "'2024-01-02 03:04:05'::timestamp",
  "'1969-12-31 23:59:59.999999'::timestamp",
  "'4713-01-01 00:00:00 BC'::timestamp",
  "'4714-11-24 00:00:00 BC'::timestamp",
  "'294276-12-31 23:59:59.999999'::timestamp",
  "'infinity'::timestamp",
  "'-infinity'::timestamp",
  "'2024-01-02 03:04:05.123456+05'::timestamptz",
  "'infinity'::timestamptz",
  "'-infinity'::timestamptz",
  // arrays: nesting, NULLs, empty, lower bounds, every element type
  "'{{1,2},{3,NULL}}'::int[]",
  "'[0:1]={1,2}'::int[]",
  "'[2:3][1:2]={{1,2},{3,4}}'::int[]",
  'array_fill(7, ARRAY[2, 2], ARRAY[-3, 5])',
  "'{}'::int[]",
  "'{NULL}'::int[]",
  "'{{{1},{2}},{{3},{4}}}'::int2[]",
  "ARRAY['9223372036854775807'::int8, NULL]",
  "'{true,false,NULL}'::bool[]",
  "ARRAY[0.1, 'NaN', '-0', 1e21, '1e23']::float8[]",
  "ARRAY[0.1, 'Infinity', 1e6]::float4[]",
  "ARRAY[1.50, 'NaN', 'Infinity', '-0.000']::numeric[]",
  `'{"a b","c\\"d",NULL,""}'::text[]`,
  "'{{x,y},{NULL,z}}'::varchar[]",
  "ARRAY['ab'::char(4), 'c']",
  "ARRAY['n'::name]",
  "ARRAY['a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid, NULL]",
  `ARRAY['{"a" : 1}'::json, NULL]`,
  `ARRAY['{"a":1}'::jsonb, '[1,2]']`,
  "'{infinity,-infinity,2024-01-01,4713-01-01 BC}'::date[]",
  "ARRAY['2024-01-02 03:04:05.5'::timestamp, '4713-01-01 BC']",
  "ARRAY['2024-01-02 03:04:05.5+00'::timestamptz, 'infinity', NULL]",
];

describe('binaryToJson equals to_json(value)::text (TimeZone UTC)', () => {
  beforeAll(async () => {
    await client.query("SET TimeZone = 'UTC'");
  });

  it.each(EXPRESSIONS)('%s', async (expression) => {
    const [expected, actual] = await bothWays(expression);
    expect(actual).toBe(expected);
  });
});

// Instants around DST changes, LMT (seconds offsets), BC, the far future (beyond JavaScript's
// Date, looked up through the 400-year cycle) and microseconds. The historic ones (before 1970)
// are checked only in zones whose history every tzdata copy agrees on.
const HISTORIC = new Set([
  '1890-01-01 00:00:00+00',
  '1500-01-01 00:00:00+00',
  '0044-03-15 12:00:00+00 BC',
  '4714-11-24 00:00:00+00 BC',
  '1918-06-01 00:00:00+00',
  '1942-06-01 00:00:00+00',
]);
const INSTANTS = [
  '2024-03-31 00:59:59.999999+00',
  '2024-03-31 01:30:00+00',
  '2024-10-27 00:30:00+00',
  '2024-10-27 01:30:00+00',
  '2024-03-10 06:59:59+00',
  '2024-03-10 07:00:00+00',
  '2024-11-03 05:30:00+00',
  '2024-11-03 06:30:00+00',
  '2024-07-01 12:00:00.5+00',
  '1890-01-01 00:00:00+00',
  '1500-01-01 00:00:00+00',
  '0044-03-15 12:00:00+00 BC',
  '4714-11-24 00:00:00+00 BC',
  '1918-06-01 00:00:00+00',
  '1942-06-01 00:00:00+00',
  '1970-01-01 00:00:00+00',
  '2000-01-01 00:00:00.000001+00',
  '2038-01-19 03:14:08+00',
  '2200-07-01 00:00:00+00',
  '294276-07-01 00:00:00+00',
  '294276-12-31 23:59:59.999999+00',
];

/** [name, SET TimeZone value, check the historic instants too]. */
const ZONES: Array<[string, string, boolean]> = [
  ['Europe/Berlin', "'Europe/Berlin'", true],
  ['Asia/Kolkata', "'Asia/Kolkata'", true],
  ['America/St_Johns', "'America/St_Johns'", true],
  ['Africa/Abidjan', "'Africa/Abidjan'", true],
  ['America/New_York', "'America/New_York'", true],
  ['Australia/Lord_Howe (30-minute DST)', "'Australia/Lord_Howe'", true],
  ['Pacific/Chatham (+12:45)', "'Pacific/Chatham'", true],
  ['Asia/Kathmandu (+05:45)', "'Asia/Kathmandu'", true],
  ['Europe/Dublin (negative DST in tzdata)', "'Europe/Dublin'", true],
  ['Etc/UTC', "'Etc/UTC'", true],
  ['Etc/GMT+3', "'Etc/GMT+3'", true],
  // A link to America/New_York since tzdata 2024b (so in ICU); Debian's tzdata still has the old
  // rule-only zone, without New York's LMT.
  ['EST5EDT', "'EST5EDT'", false],
  ['POSIX +05:30 (west of Greenwich)', "'+05:30'", true],
  ['POSIX UTC+3', "'UTC+3'", true],
  ['SET TIME ZONE -7 (<-07>+07)', '-7', true],
  ['SET TIME ZONE 5.75 (<+05:45>-05:45)', '5.75', true],
];

describe.each(ZONES)('timestamptz in TimeZone %s', (_name, setting, historic) => {
  beforeAll(async () => {
    await client.query(`SET TimeZone = ${setting}`);
  });
  afterAll(async () => {
    await client.query("SET TimeZone = 'UTC'");
  });

  it('renders every instant as to_json does', async () => {
    const instants = INSTANTS.filter((i) => historic || !HISTORIC.has(i));
    const literals = instants.map((i) => `'${i}'::timestamptz`);
    const text = await client.query<{ j: string }>(`SELECT to_json(t)::text AS j FROM unnest(ARRAY[${literals.join(', ')}]) WITH ORDINALITY u(t, o) ORDER BY o`);
    const { oids, rows } = await binaryRows(`SELECT t FROM unnest(ARRAY[${literals.join(', ')}]) WITH ORDINALITY u(t, o) ORDER BY o`);
    const timeZone = await sessionTimeZone();
    const actual = rows.map((row, i) => [instants[i], binaryToJson(oids[0]!, row[0]!, { timeZone })]);
    expect(actual).toEqual(text.rows.map((row, i) => [instants[i], row.j]));
  });

  it('renders a timestamptz[] as to_json does', async () => {
    // The first nine instants: 2024 only.
    const [expected, actual] = await bothWays(`ARRAY[${INSTANTS.slice(0, 9).map((i) => `'${i}'::timestamptz`).join(', ')}]`);
    expect(actual).toBe(expected);
  });
});

/** Deterministic pseudo-random 32-bit words (mulberry32), so a failure can be rerun. */
function words(seed: number, count: number): number[] {
  const out: number[] = [];
  let a = seed >>> 0;
  for (let i = 0; i < count; i++) {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    out.push((t ^ (t >>> 14)) >>> 0);
  }
  return out;
}

describe('random floats: every bit pattern class renders as to_json does', () => {
  async function compare(type: 'float4' | 'float8', literals: string[]): Promise<void> {
    const sql = (select: string) => `SELECT ${select} FROM unnest($1::text[]) WITH ORDINALITY u(v, o) ORDER BY o`;
    const text = await client.query<{ j: string }>(sql(`to_json(v::${type})::text AS j`), [literals]);
    const { oids, rows } = await binaryRows(sql(`v::${type}`), [literals]);
    const mismatches = rows
      .map((row, i) => ({ literal: literals[i], expected: text.rows[i]!.j, actual: binaryToJson(oids[0]!, row[0]!, { timeZone: 'UTC' }) }))
      .filter((r) => r.expected !== r.actual);
    expect(mismatches).toEqual([]);
  }

  it('float8', async () => {
    const w = words(20240531, 8000);
    const view = new DataView(new ArrayBuffer(8));
    const literals: string[] = [];
    for (let i = 0; i < w.length; i += 2) {
      view.setUint32(0, w[i]!);
      view.setUint32(4, w[i + 1]!);
      const value = view.getFloat64(0);
      if (Number.isFinite(value)) literals.push(String(value));
      // Few significant bits: exact ties between shortest candidates and boundary cases.
      literals.push(String((w[i]! >>> 12) * 2 ** ((w[i + 1]! % 200) - 100)), `${w[i]! % 1000}e${15 + (w[i + 1]! % 30)}`);
    }
    await compare('float8', literals);
  });

  it('float4', async () => {
    const w = words(19700101, 6000);
    const view = new DataView(new ArrayBuffer(4));
    const literals: string[] = [];
    for (let i = 0; i < w.length; i += 2) {
      view.setUint32(0, w[i]!);
      const value = view.getFloat32(0);
      if (Number.isFinite(value)) literals.push(value.toPrecision(9));
      literals.push(String((w[i]! >>> 12) * 2 ** ((w[i + 1]! % 60) - 30)), String(2 ** ((w[i + 1]! % 276) - 149)));
    }
    await compare('float4', literals);
  });
});
