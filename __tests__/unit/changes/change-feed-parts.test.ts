/**
 * The change feed's pieces that need no database (docs/change-feed.md): pgoutput messages as the
 * slot functions return them, event positions (ordered as strings, refused when forged), and SSE
 * frames (a line break in the data becomes a second `data:` line).
 */
import { decodePgOutput } from '../../../lib/doors/changes/decode-pgoutput';
import { eventId, lsnKey, lsnText, positionBefore, readEventId } from '../../../lib/doors/changes/event-position';
import { frame } from '../../../lib/doors/changes/event-stream';

function bytes(...parts: (string | number[] | Buffer)[]): Buffer {
  return Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'utf8') : Buffer.isBuffer(p) ? p : Buffer.from(p))));
}
const int16 = (n: number) => { const b = Buffer.alloc(2); b.writeInt16BE(n); return b; };
const int32 = (n: number) => { const b = Buffer.alloc(4); b.writeInt32BE(n); return b; };
const int64 = (n: bigint) => { const b = Buffer.alloc(8); b.writeBigInt64BE(n); return b; };
const cstr = (s: string) => bytes(s, [0]);
const text = (s: string) => bytes('t', int32(Buffer.byteLength(s)), s);

describe('decodePgOutput (protocol version 1)', () => {
  it('reads Begin: the commit LSN and the commit time', () => {
    // 2000-01-01 + 1 s, in microseconds since PostgreSQL's epoch.
    const m = decodePgOutput(bytes('B', int64(0x1_6b3748n), int64(1_000_000n), int32(730)));
    expect(m).toEqual({ tag: 'begin', finalLsn: '0/16B3748', commitTime: Date.UTC(2000, 0, 1, 0, 0, 1) });
  });

  it('reads Commit: the LSN just past it', () => {
    expect(decodePgOutput(bytes('C', [0], int64(0x10n), int64(0x2_0000_0040n), int64(0n)))).toEqual({ tag: 'commit', endLsn: '2/40' });
  });

  it('reads Relation, Insert, Update with the old row, and Delete; values as text, null or unchanged', () => {
    const rel = bytes('R', int32(16384), cstr('feed'), cstr('or"ders'), [102], int16(2), [1], cstr('id'), int32(23), int32(-1), [0], cstr('notë'), int32(25), int32(-1));
    expect(decodePgOutput(rel)).toEqual({ tag: 'relation', id: 16384, schema: 'feed', name: 'or"ders', columns: ['id', 'notë'] });
    const tuple = bytes(int16(2), text('7'), 'n');
    expect(decodePgOutput(bytes('I', int32(16384), 'N', tuple))).toEqual({ tag: 'insert', relation: 16384, row: ['7', null] });
    const old = bytes(int16(2), text('7'), text('a\nb'));
    const next = bytes(int16(2), text('7'), 'u');
    expect(decodePgOutput(bytes('U', int32(16384), 'O', old, 'N', next))).toEqual({ tag: 'update', relation: 16384, old: ['7', 'a\nb'], row: ['7', undefined] });
    expect(decodePgOutput(bytes('U', int32(16384), 'N', next))).toEqual({ tag: 'update', relation: 16384, old: null, row: ['7', undefined] });
    expect(decodePgOutput(bytes('D', int32(16384), 'K', bytes(int16(2), text('7'), 'n')))).toEqual({ tag: 'delete', relation: 16384, old: ['7', null] });
  });

  it('skips what the feed does not use (Truncate, Type, Origin)', () => {
    expect(decodePgOutput(bytes('T', int32(1), [0], int32(16384)))).toEqual({ tag: 'other' });
    expect(decodePgOutput(bytes('Y', int32(1)))).toEqual({ tag: 'other' });
  });
});

describe('event positions', () => {
  it('order as strings in WAL order: commit position, then index in the transaction', () => {
    const ids = [eventId(lsnKey('0/16B3748'), 0), eventId(lsnKey('0/16B3748'), 11), eventId(lsnKey('0/FFFFFFFF'), 0), eventId(lsnKey('1/0'), 0), eventId(lsnKey('A/10'), 2)];
    expect([...ids].sort()).toEqual(ids);
    expect(positionBefore(lsnKey('0/16B3748')) < ids[0]!).toBe(true);
    expect(lsnText(lsnKey('A/10'))).toBe('A/10');
    expect(lsnText(lsnKey('0/0'))).toBe('0/0');
  });

  it('reads back an id it wrote, and refuses anything else with a 400', () => {
    const id = eventId(lsnKey('0/16B3748'), 3);
    expect(readEventId(` ${id.toLowerCase()} `)).toBe(id);
    for (const bad of ['', '1', `${id}x`, '00000000016B3748-3', "'; DROP TABLE x"]) {
      expect(() => readEventId(bad)).toThrow(expect.objectContaining({ code: 'PARSE_ERROR', status: 400 }));
    }
  });
});

describe('frame', () => {
  it('writes id, event and data, and a blank line', () => {
    expect(frame('X-1', 'insert', '{"a":1}')).toBe('id: X-1\nevent: insert\ndata: {"a":1}\n\n');
    expect(frame(undefined, 'reload', '{}')).toBe('event: reload\ndata: {}\n\n');
  });

  it('splits the data at line breaks into data lines, which a client joins with \\n', () => {
    expect(frame('X', 'update', '{"doc":{\r\n"a":\r1}}')).toBe('id: X\nevent: update\ndata: {"doc":{\ndata: "a":\ndata: 1}}\n\n');
  });
});
