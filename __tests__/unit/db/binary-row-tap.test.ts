import { EventEmitter } from 'node:events';
import { BinaryRowTap, BinaryRowsTooLargeError } from '../../../lib/db/binary-row-tap';

/** One backend message: type byte, int32 length (itself included), payload. */
const message = (type: string, payload: Buffer): Buffer => {
  const head = Buffer.alloc(5);
  head.write(type, 0, 'latin1');
  head.writeInt32BE(payload.length + 4, 1);
  return Buffer.concat([head, payload]);
};

const dataRow = (...fields: (Buffer | null)[]): Buffer => {
  const parts: Buffer[] = [Buffer.from([0, 0])];
  parts[0]!.writeInt16BE(fields.length);
  for (const f of fields) {
    const len = Buffer.alloc(4);
    len.writeInt32BE(f === null ? -1 : f.length);
    parts.push(len, ...(f === null ? [] : [f]));
  }
  return message('D', Buffer.concat(parts));
};

const int4 = (n: number): Buffer => {
  const b = Buffer.alloc(4);
  b.writeInt32BE(n);
  return b;
};

describe('BinaryRowTap', () => {
  // A pipelined batch: the context statement's row (no RowDescription), then the plan statement,
  // then the reset (RESET ALL, RESET ROLE, DISCARD TEMP and a statement with a row of its own).
  const batch = Buffer.concat([
    message('2', Buffer.alloc(0)),
    dataRow(Buffer.from('t'), Buffer.from('u')),
    message('C', Buffer.from('SELECT 1\0')),
    message('1', Buffer.alloc(0)),
    message('2', Buffer.alloc(0)),
    message('T', Buffer.from('whatever')),
    dataRow(int4(1000), null),
    dataRow(int4(-1), Buffer.from([0xff, 0xfe, 0x80])),
    message('C', Buffer.from('SELECT 2\0')),
    message('2', Buffer.alloc(0)),
    message('C', Buffer.from('RESET\0')),
    message('2', Buffer.alloc(0)),
    message('C', Buffer.from('RESET\0')),
    message('2', Buffer.alloc(0)),
    message('C', Buffer.from('DISCARD TEMP\0')),
    message('2', Buffer.alloc(0)),
    dataRow(Buffer.from('t'), Buffer.from('u')),
    message('C', Buffer.from('SELECT 1\0')),
    message('Z', Buffer.from('I')),
  ]);

  it.each([1, 3, 7, batch.length])('keeps the exact bytes of the described statement\'s rows, in chunks of %i bytes', (size) => {
    const stream = new EventEmitter();
    const tap = new BinaryRowTap(stream);
    for (let i = 0; i < batch.length; i += size) stream.emit('data', batch.subarray(i, i + size));
    expect(tap.rows).toEqual([
      [int4(1000), null],
      [int4(-1), Buffer.from([0xff, 0xfe, 0x80])],
    ]);
    // The described statement's CommandComplete ends it: the tap no longer listens.
    expect(stream.listenerCount('data')).toBe(0);
  });

  it('runs before the listeners registered earlier (pg may finish the batch on the same chunk)', () => {
    const stream = new EventEmitter();
    let tap: BinaryRowTap | undefined;
    const seenByPg: number[] = [];
    stream.on('data', () => seenByPg.push(tap?.rows.length ?? -1));
    tap = new BinaryRowTap(stream);
    stream.emit('data', batch);
    expect(seenByPg).toEqual([2]);
  });

  it('refuses rows over maxBytes from the DataRow header, before their bytes arrive', () => {
    const big = Buffer.concat([message('T', Buffer.from('x')), dataRow(Buffer.alloc(1000, 0x61))]);
    const stream = new EventEmitter();
    const tap = new BinaryRowTap(stream, 999);
    // The RowDescription and the DataRow's header (its length) only: already over the bound.
    let thrown: unknown;
    try {
      stream.emit('data', big.subarray(0, 20));
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(BinaryRowsTooLargeError);
    expect((thrown as BinaryRowsTooLargeError).bytes).toBe(1000 + 4 + 2 + 4);
    expect(stream.listenerCount('data')).toBe(0);
    expect(tap.rows).toEqual([]);
  });

  it('assembles a row that comes in many chunks; rows whose sum is under the bound pass', () => {
    const value = Buffer.alloc(400_000, 0x62);
    const rows = Buffer.concat([message('T', Buffer.from('x')), dataRow(value), dataRow(int4(7)), message('C', Buffer.from('SELECT 2\0'))]);
    const stream = new EventEmitter();
    const tap = new BinaryRowTap(stream, 400_100);
    for (let i = 0; i < rows.length; i += 1024) stream.emit('data', rows.subarray(i, i + 1024));
    expect(tap.rows.map((r) => r.length)).toEqual([1, 1]);
    expect(value.equals(tap.rows[0]![0]!)).toBe(true);
    expect(tap.rows[1]![0]).toEqual(int4(7));
  });
});
