import { EventEmitter } from 'node:events';
import pg from 'pg';
import { RawRowQuery } from '../../../lib/db/raw-row-query';
import { backendMessage, dataRowPayload } from '../../support/backend-messages';

const message = backendMessage;
const dataRow = (...fields: (string | null)[]): Buffer => message('D', dataRowPayload(...fields));

const rowDescription = message('T', Buffer.from('\0\0fake description'));
const commandComplete = message('C', Buffer.from('FETCH 2\0'));
const ready = message('Z', Buffer.from('T'));
const notice = message('N', Buffer.from('Sfake notice\0\0'));
const errorResponse = message('E', Buffer.from('SERROR\0C57014\0Mcanceled\0\0'));

/** A stream with pg's own 'data' listener (recording what it sees) and a connection over it. */
function connection() {
  const stream = new EventEmitter();
  const seen: Buffer[] = [];
  const pgListener = (chunk: Buffer): void => void seen.push(Buffer.from(chunk));
  stream.on('data', pgListener);
  const sent: string[] = [];
  return { stream, seen, pgListener, sent, connection: { stream, query: (text: string) => void sent.push(text), sendCopyFail: () => undefined } };
}

/** The fields of each DataRow the query handed over, decoded for comparison. */
function rowsOf(payloads: { payload: Buffer; start: number; end: number }[]): (string | null)[][] {
  return payloads.map(({ payload, start, end }) => {
    const count = payload.readInt16BE(start);
    const fields: (string | null)[] = [];
    let at = start + 2;
    for (let i = 0; i < count; i++) {
      const length = payload.readInt32BE(at);
      at += 4;
      fields.push(length < 0 ? null : payload.toString('utf8', at, at + length));
      if (length > 0) at += length;
    }
    expect(at).toBe(end);
    return fields;
  });
}

describe('RawRowQuery', () => {
  const rows = [dataRow('1', 'é,"x"', null), dataRow('2', '', 'z')];
  const response = Buffer.concat([rowDescription, rows[0]!, notice, rows[1]!, commandComplete, ready]);
  const after = message('A', Buffer.from('\0\0\0\x01chan\0payload\0')); // a notification after ReadyForQuery
  const passedToPg = Buffer.concat([rowDescription, notice, commandComplete, ready, after]);

  it('hands every DataRow over as bytes and passes every other message, and what follows ReadyForQuery, to pg unchanged, however the stream is cut (in two, or byte by byte)', () => {
    const whole = Buffer.concat([response, after]);
    for (let cut = 1; cut < whole.length; cut++) {
      const c = connection();
      const got: { payload: Buffer; start: number; end: number }[] = [];
      const query = new RawRowQuery('FETCH 2 FROM x', (payload, start, end) => void got.push({ payload: Buffer.from(payload), start, end }));
      query.submit(c.connection);
      expect(c.sent).toEqual(['FETCH 2 FROM x']);
      // pg's listener is off the stream while the statement runs.
      expect(c.stream.listeners('data')).not.toContain(c.pgListener);
      if (cut === 1) for (let i = 0; i < whole.length; i++) c.stream.emit('data', whole.subarray(i, i + 1));
      else {
        c.stream.emit('data', whole.subarray(0, cut));
        c.stream.emit('data', whole.subarray(cut));
      }
      expect(rowsOf(got)).toEqual([
        ['1', 'é,"x"', null],
        ['2', '', 'z'],
      ]);
      expect(Buffer.concat(c.seen).equals(passedToPg)).toBe(true);
      // Back in place, alone, once ReadyForQuery is through.
      expect(c.stream.listeners('data')).toEqual([c.pgListener]);
    }
  });

  it('settles at ReadyForQuery, and rejects with the error pg reports for an ErrorResponse, keeping the filter until ReadyForQuery', async () => {
    const ok = new RawRowQuery('FETCH', () => undefined);
    ok.handleReadyForQuery();
    await expect(ok.done).resolves.toBeUndefined();

    const c = connection();
    const failing = new RawRowQuery('FETCH', () => undefined);
    failing.submit(c.connection);
    c.stream.emit('data', Buffer.concat([rowDescription, rows[0]!, errorResponse]));
    const err = new Error('canceling statement due to user request');
    failing.handleError(err); // what pg's client does when its parser sees the ErrorResponse
    await expect(failing.done).rejects.toBe(err);
    expect(c.stream.listeners('data')).not.toContain(c.pgListener);
    c.stream.emit('data', ready);
    failing.handleReadyForQuery();
    expect(c.stream.listeners('data')).toEqual([c.pgListener]);
    expect(Buffer.concat(c.seen).equals(Buffer.concat([rowDescription, errorResponse, ready]))).toBe(true);
  });

  it('builds on node-postgres as it is: a Submittable gets submit(connection), the Connection has query(text) and stream, pg-protocol reads the stream with one data listener', () => {
    const client = pg.Client.prototype as unknown as Record<string, unknown>;
    expect(String(client['query'])).toMatch(/typeof config\.submit === 'function'/);
    expect(String(client['_pulseQueryQueue'])).toMatch(/activeQuery\.submit\(this\.connection\)/);
    const Connection = (pg as unknown as { Connection: { prototype: Record<string, unknown> } }).Connection;
    expect(String(Connection.prototype['query'])).toMatch(/serialize\.query\(text\)/);
    const stream = new EventEmitter();
    const connection = new (pg as unknown as { Connection: new (c: object) => { attachListeners(s: EventEmitter): void } }).Connection({ stream });
    connection.attachListeners(stream);
    expect(stream.listeners('data')).toHaveLength(1);
  });
});
