import { ExportRowEncoder, type EncoderShape } from '../../../lib/db/export-row-encoder';
import { dataRowPayload } from '../../support/backend-messages';

const payload = dataRowPayload;

function encode(shape: EncoderShape, rows: (string | null)[][]): { text: string; rows: number; bytes: number } {
  const encoder = new ExportRowEncoder(shape);
  for (const row of rows) {
    // The payload at an offset inside a larger buffer, as it sits in a socket chunk.
    const p = Buffer.concat([Buffer.from('xxxxx'), payload(...row), Buffer.from('yy')]);
    encoder.row(p, 5, p.length - 2);
  }
  const batch = encoder.takeBatch();
  return { text: Buffer.concat(batch.chunks).toString('utf8'), rows: batch.rows, bytes: batch.bytes };
}

const every = Array.from({ length: 0x20 }, (_, c) => String.fromCharCode(c)).join('');
const awkward = `${every}"\\/\u007f\u0080\u2028\u2029\ufeff😀é say "hi" \\u0041 \\n`;

describe('ExportRowEncoder', () => {
  it('writes JSON strings byte for byte as JSON.stringify (PostgreSQL escape_json) does, numbers, NaN/Infinity, booleans, uuid, json, NULL', () => {
    const shape: EncoderShape = { format: 'ndjson', columns: ['s', 'n', 'b', 'u', 'j', 'say "hi" é'], plain: [], json: ['string', 'number', 'bool', 'plainString', 'raw', 'raw'] };
    const out = encode(shape, [
      [awkward, '1.50', 't', '8a1e5f0e-0000-4000-8000-000000000001', '{"a": [1]}', null],
      ['', 'NaN', 'f', null, null, '7'],
      [null, 'Infinity', null, null, null, null],
      ['x', '-Infinity', null, null, null, null],
      ['y', '-0.01', null, null, null, null],
    ]);
    const keys = shape.columns.map((c) => JSON.stringify(c));
    const line = (...values: string[]): string => `{${values.map((v, k) => `${keys[k]}:${v}`).join(',')}}\n`;
    expect(out.text).toBe(
      line(JSON.stringify(awkward), '1.50', 'true', '"8a1e5f0e-0000-4000-8000-000000000001"', '{"a": [1]}', 'null') +
        line('""', '"NaN"', 'false', 'null', 'null', '7') +
        line('null', '"Infinity"', 'null', 'null', 'null', 'null') +
        line('"x"', '"-Infinity"', 'null', 'null', 'null', 'null') +
        line('"y"', '-0.01', 'null', 'null', 'null', 'null'),
    );
    expect(out.rows).toBe(5);
    expect(out.bytes).toBe(Buffer.byteLength(out.text));
  });

  it('joins JSON rows with commas, across batches too', () => {
    const encoder = new ExportRowEncoder({ format: 'json', columns: ['a'], plain: [], json: ['raw'] });
    const text = (): string => Buffer.concat(encoder.takeBatch().chunks).toString();
    const p = payload('1');
    encoder.row(p, 0, p.length);
    encoder.row(p, 0, p.length);
    expect(text()).toBe('{"a":1},{"a":1}');
    encoder.row(p, 0, p.length);
    expect(text()).toBe(',{"a":1}');
    expect(text()).toBe('');
  });

  it('writes RFC 4180 CSV as COPY does: quotes a field with , " CR LF or an empty one, doubles quotes, NULL empty, plain columns as they are, CRLF', () => {
    const shape: EncoderShape = { format: 'csv', columns: ['a', 'b', 'c', 'd'], plain: [false, false, false, true], json: [] };
    expect(encode(shape, [['plain é', 'a,b', 'say "hi"', '1.5'], ['', null, 'x\r\ny', null], ['\n', '"', ',', '']]).text).toBe(
      'plain é,"a,b","say ""hi""",1.5\r\n"",,"x\r\ny",\r\n"\n","""",",",\r\n',
    );
  });

  it('spreads a large batch over Buffers without losing or reordering a byte', () => {
    const shape: EncoderShape = { format: 'ndjson', columns: ['i', 's'], plain: [], json: ['raw', 'string'] };
    const rows = Array.from({ length: 5000 }, (_, i) => [String(i), `${'\u0001"'.repeat(i % 50)}${'é'.repeat(i % 7)}`]);
    const out = encode(shape, rows);
    expect(out.text).toBe(rows.map(([i, s]) => `{"i":${i},"s":${JSON.stringify(s)}}\n`).join(''));
    expect(out.bytes).toBe(Buffer.byteLength(out.text));
  });
});
