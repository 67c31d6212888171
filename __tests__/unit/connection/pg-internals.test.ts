/**
 * The connection policy subclasses node-postgres' Connection (lib/db/connection/pg-internals.ts).
 * These checks fail when a pg upgrade changes what it builds on, so the policy can never be
 * silently bypassed by a new pg version.
 */
import { EventEmitter } from 'node:events';
import pg from 'pg';
import { PgConnectionClass } from '../../../lib/db/connection/pg-internals';

class FakeSocket extends EventEmitter {
  connect(): void {}
  setNoDelay(): void {}
  write(): boolean {
    return true;
  }
}

describe('node-postgres internals the policy relies on', () => {
  it('Connection has connect, attachListeners and sendSASLInitialResponseMessage', () => {
    for (const name of ['connect', 'attachListeners', 'sendSASLInitialResponseMessage', 'requestSsl', 'startup']) {
      expect([name, typeof (PgConnectionClass.prototype as unknown as Record<string, unknown>)[name]]).toEqual([name, 'function']);
    }
  });

  it('with ssl set, connect() reads the SSLRequest answer with exactly one data listener', () => {
    const stream = new FakeSocket();
    const connection = new (pg as unknown as { Connection: new (c: object) => { connect(p: number, h: string): void } }).Connection({ stream, ssl: {} });
    connection.connect(5432, 'localhost');
    expect(stream.listeners('data')).toHaveLength(1);
  });

  it('Client takes a `connection` and answers SASL through connection.sendSASLInitialResponseMessage', () => {
    const connection = new EventEmitter();
    const client = new pg.Client({ connection } as unknown as pg.ClientConfig) as unknown as { connection: unknown };
    expect(client.connection).toBe(connection);
    expect(String((pg.Client.prototype as unknown as Record<string, unknown>)['_handleAuthSASL'])).toMatch(/connection\.sendSASLInitialResponseMessage/);
  });
});
