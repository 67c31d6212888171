/**
 * Draining (lib/ops/drain.ts): after drain() starts nothing new enters; drain() waits for the
 * requests in flight, and at the timeout aborts each one still running exactly once.
 */
import { Drain } from '../../../lib/ops/drain';

beforeEach(() => jest.useFakeTimers());
afterEach(() => jest.useRealTimers());

test('drain() refuses new requests at once and resolves when the last one in flight leaves', async () => {
  const drain = new Drain();
  const aborts: string[] = [];
  const a = drain.enter(() => aborts.push('a'))!;
  const b = drain.enter(() => aborts.push('b'))!;
  expect(drain.inFlight).toBe(2);
  let result: number | undefined;
  const done = drain.drain(10_000).then((n) => (result = n));
  expect(drain.draining).toBe(true);
  expect(drain.enter(() => aborts.push('late'))).toBeUndefined();
  a.leave();
  await Promise.resolve();
  expect(result).toBeUndefined();
  b.leave();
  await done;
  expect(result).toBe(0);
  expect(aborts).toEqual([]);
  // Leaving twice, or after the end, changes nothing.
  b.leave();
  expect(drain.inFlight).toBe(0);
});

test('at the timeout every request still running is aborted once; one that left is not', async () => {
  const drain = new Drain();
  const aborts: string[] = [];
  const a = drain.enter(() => aborts.push('a'))!;
  const b = drain.enter(() => aborts.push('b'))!;
  const c = drain.enter(() => {
    throw new Error('socket gone');
  })!;
  b.leave();
  const done = drain.drain(500);
  jest.advanceTimersByTime(499);
  expect(aborts).toEqual([]);
  jest.advanceTimersByTime(1);
  expect(await done).toBe(2);
  expect(aborts).toEqual(['a']);
  expect(a.aborted).toBe(true);
  expect(b.aborted).toBe(false);
  expect(c.aborted).toBe(true);
  a.leave();
  jest.advanceTimersByTime(10_000);
  expect(aborts).toEqual(['a']);
});

test('drain() with nothing in flight resolves at once', async () => {
  const drain = new Drain();
  drain.enter(() => undefined)!.leave();
  await expect(drain.drain(10_000)).resolves.toBe(0);
});
