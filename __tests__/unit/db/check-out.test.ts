/**
 * Which errors make the gateway discard a connection instead of giving it back to the pool
 * (lib/db/check-out.ts), and the host-pool guard (lib/db/guard-pool.ts). The behaviour under real
 * database faults is in __tests__/integration/database-faults.test.ts.
 */
import { EventEmitter } from 'node:events';
import pg from 'pg';
import { checkOut, isConnectionFailure, sweepIntervalMs } from '../../../lib/db/check-out';
import { guardPool } from '../../../lib/db/guard-pool';

const pgError = (code: string, severity = 'ERROR') => Object.assign(new Error('x'), { code, severity });

describe('isConnectionFailure', () => {
  it.each([
    ['Connection terminated unexpectedly', new Error('Connection terminated unexpectedly')],
    ['ECONNRESET', Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' })],
    ['a client that already failed', new Error('Client has encountered a connection error and is not queryable')],
    ['57P01 admin_shutdown (FATAL)', pgError('57P01', 'FATAL')],
    ['57P02 crash_shutdown', pgError('57P02')],
    ['57P03 cannot_connect_now', pgError('57P03', 'FATAL')],
    ['class 08 connection exception', pgError('08006')],
    ['any FATAL', pgError('XX000', 'FATAL')],
    ['PANIC', pgError('XX000', 'PANIC')],
    ['not an Error at all', 'boom'],
  ])('discards after %s', (_name, err) => {
    expect(isConnectionFailure(err)).toBe(true);
  });

  it.each([
    ['23505 unique_violation', pgError('23505')],
    ['57014 statement timeout', pgError('57014')],
    ['42501 insufficient_privilege', pgError('42501')],
    ['P0001 raise_exception', pgError('P0001')],
  ])('keeps the connection after %s', (_name, err) => {
    expect(isConnectionFailure(err)).toBe(false);
  });
});

describe('guardPool (a pool given by the host)', () => {
  it("handles the pool's 'error' event, keeps the host's own listeners, and removes only its own", async () => {
    const pool = new pg.Pool({ host: '127.0.0.1', port: 1 });
    const unguarded = () => pool.emit('error', new Error('Connection terminated unexpectedly'));
    expect(unguarded).toThrow('Connection terminated unexpectedly');
    const hostSaw: string[] = [];
    const hostListener = (err: Error) => hostSaw.push(err.message);
    const unguard = guardPool(pool);
    expect(unguarded).not.toThrow();
    pool.on('error', hostListener);
    pool.emit('error', new Error('second'));
    expect(hostSaw).toEqual(['second']);
    unguard();
    expect(pool.listeners('error')).toEqual([hostListener]);
    await pool.end();
  });
});

/** A pool that hands out one fake client (an EventEmitter with pg's release and socket). */
function fakePool() {
  const released: (Error | undefined)[] = [];
  let destroyed = 0;
  const client = Object.assign(new EventEmitter(), {
    release: (err?: Error) => void released.push(err),
    connection: { stream: { destroy: () => void destroyed++ } },
  });
  const pool = { connect: (cb: (err: Error | undefined, c: unknown) => void) => cb(undefined, client) } as unknown as pg.Pool;
  return { pool, client, released, destroyed: () => destroyed };
}

describe('checkOut', () => {
  it('gives a client one error listener for its life, however often it is checked out', async () => {
    const { pool, client } = fakePool();
    for (let i = 0; i < 5; i++) (await checkOut(pool, 1000)).release();
    expect(client.listenerCount('error')).toBe(1);
  });

  it('discards a client that emitted an error while checked out, and only under that lease', async () => {
    const { pool, client, released } = fakePool();
    const first = await checkOut(pool, 0);
    client.emit('error', new Error('Connection terminated unexpectedly'));
    first.release();
    expect(released[0]?.message).toBe('Connection terminated unexpectedly');
    // After release the error is the pool's: the next lease starts clean.
    client.emit('error', new Error('late'));
    (await checkOut(pool, 0)).release();
    expect(released[1]).toBeUndefined();
  });

  it('cuts the connection when the deadline passes, at most one sweep late', async () => {
    const { pool, released, destroyed } = fakePool();
    const lease = await checkOut(pool, 50);
    await new Promise((r) => setTimeout(r, 50 + sweepIntervalMs + 100));
    expect(lease.timedOut).toBe(true);
    expect(destroyed()).toBe(1);
    lease.release();
    expect(released[0]?.message).toMatch(/did not answer within 50 ms/);
  });

  it('does not cut a connection released before its deadline', async () => {
    const { pool, destroyed } = fakePool();
    const lease = await checkOut(pool, 50);
    lease.release();
    await new Promise((r) => setTimeout(r, 50 + sweepIntervalMs + 100));
    expect(lease.timedOut).toBe(false);
    expect(destroyed()).toBe(0);
  });
});
