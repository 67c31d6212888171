/**
 * The debounce of schema reloads (lib/schema/reload-scheduler.ts): a burst of requests costs one
 * reload, reloads never overlap, and a request that arrives during a reload gets exactly one more.
 */
import { createReloadScheduler } from '../../../lib/schema/reload-scheduler';

/** A reload whose completion the test controls. */
function controlledReload() {
  const calls: string[] = [];
  const finishers: Array<(err?: Error) => void> = [];
  let active = 0;
  let maxActive = 0;
  const reload = (reason: string): Promise<void> => {
    calls.push(reason);
    active++;
    maxActive = Math.max(maxActive, active);
    return new Promise<void>((resolve, reject) => {
      finishers.push((err) => {
        active--;
        if (err) reject(err);
        else resolve();
      });
    });
  };
  return { reload, calls, finish: (err?: Error) => finishers.shift()!(err), maxActive: () => maxActive };
}

/** Lets the scheduler's promise callbacks run. */
async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await Promise.resolve();
}

beforeEach(() => jest.useFakeTimers());
afterEach(() => jest.useRealTimers());

test('a burst of requests within the window causes one reload, windowMs after the first request', async () => {
  const r = controlledReload();
  const scheduler = createReloadScheduler(r.reload, { windowMs: 150, onError: () => undefined });
  scheduler.request('notify');
  for (let i = 0; i < 49; i++) {
    jest.advanceTimersByTime(2);
    scheduler.request('notify');
  }
  expect(r.calls).toEqual([]);
  jest.advanceTimersByTime(150 - 98 - 1);
  expect(r.calls).toEqual([]);
  jest.advanceTimersByTime(1);
  expect(r.calls).toEqual(['notify']);
  r.finish();
  await settle();
  jest.advanceTimersByTime(1000);
  expect(r.calls).toEqual(['notify']);
});

test('requests during a reload cause exactly one more reload after it, never an overlapping one', async () => {
  const r = controlledReload();
  const scheduler = createReloadScheduler(r.reload, { windowMs: 100, onError: () => undefined });
  scheduler.request('notify');
  jest.advanceTimersByTime(100);
  expect(r.calls).toHaveLength(1);
  // Three requests while the first reload runs, long after its window.
  scheduler.request('poll');
  jest.advanceTimersByTime(500);
  scheduler.request('notify');
  scheduler.request('reconnect');
  jest.advanceTimersByTime(500);
  expect(r.calls).toHaveLength(1);
  r.finish();
  await settle();
  expect(r.calls).toHaveLength(1); // the follow-up waits for its own window
  jest.advanceTimersByTime(100);
  expect(r.calls).toEqual(['notify', 'poll']);
  r.finish();
  await settle();
  jest.advanceTimersByTime(1000);
  expect(r.calls).toHaveLength(2);
  expect(r.maxActive()).toBe(1);
});

test('a failed reload is reported and the next request reloads again', async () => {
  const r = controlledReload();
  const errors: string[] = [];
  const scheduler = createReloadScheduler(r.reload, { windowMs: 10, onError: (err, reason) => errors.push(`${reason}: ${(err as Error).message}`) });
  scheduler.request('notify');
  jest.advanceTimersByTime(10);
  r.finish(new Error('database gone'));
  await settle();
  expect(errors).toEqual(['notify: database gone']);
  scheduler.request('reconnect');
  jest.advanceTimersByTime(10);
  expect(r.calls).toEqual(['notify', 'reconnect']);
  r.finish();
  await settle();
});

test('stop() cancels a pending reload, waits for a running one, and ignores later requests', async () => {
  const r = controlledReload();
  const scheduler = createReloadScheduler(r.reload, { windowMs: 10, onError: () => undefined });
  scheduler.request('notify');
  jest.advanceTimersByTime(10);
  scheduler.request('notify'); // would be a follow-up
  let stopped = false;
  const stopping = scheduler.stop().then(() => (stopped = true));
  await settle();
  expect(stopped).toBe(false);
  r.finish();
  await stopping;
  scheduler.request('notify');
  jest.advanceTimersByTime(1000);
  expect(r.calls).toEqual(['notify']);
});
