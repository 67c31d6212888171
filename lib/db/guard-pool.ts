/**
 * A pool given by the host (`pool` option) gets the same protection as the one the gateway creates
 * (create-pool.ts): an 'error' listener, so that an idle client whose server goes away (pg-pool
 * then emits 'error' on the pool) cannot crash the process through an unhandled 'error' event.
 *
 * In: the host's pool. Out: a function that removes the listener again (gateway.close()).
 * Never: removes or replaces the host's own listeners; the pool has already discarded the client,
 * so logging is all that is left to do.
 */
import type pg from 'pg';
import createDebug from 'debug';

const log = createDebug('tablegate:pool');

export function guardPool(pool: pg.Pool): () => void {
  const onError = (err: Error): void => log('idle client error (host pool): %s', err.message);
  pool.on('error', onError);
  return () => void pool.removeListener('error', onError);
}
