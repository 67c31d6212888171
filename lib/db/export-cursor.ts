/**
 * An export's rows, read from a cursor in batches (docs/querying.md, "Exports").
 * In: a pool, the caller's transaction settings and the plan's statement. Out: a RowStream
 * (lib/pipeline/row-stream.ts) whose first batch is already read. Never: holds more than three
 * batches (the one being written and two read ahead); leaves a transaction open or gives a
 * client back to the pool mid-transaction.
 *
 *   BEGIN READ ONLY
 *   SELECT set_config('app.current_tenant_id', $1, true), ...      the context statement
 *   DECLARE tablegate_export NO SCROLL CURSOR FOR <plan statement>    with the plan's parameters
 *   FETCH <batch> FROM tablegate_export                              ... until a short batch
 *   ROLLBACK; RESET ALL; RESET ROLE; DISCARD TEMP; SELECT pg_advisory_unlock_all()
 *
 * A cursor, not COPY: COPY takes no bound parameters, and values are never written into SQL.
 * The FETCHes' DataRows are read as bytes (raw-row-query.ts) and encoded straight into the
 * response's bytes (export-row-encoder.ts): pg never makes a string of a value.
 * All statements are unnamed and the cursor lives inside one transaction, so this works behind
 * PgBouncer in transaction mode. `statement_timeout` (export_statement_timeout_ms) applies to
 * each FETCH. Closing early (the client went away) while a FETCH runs sends a CancelRequest
 * (send-cancel.ts) so that the backend stops at once, then rolls back and releases the client;
 * when the rollback cannot be confirmed, the client is discarded instead.
 */
import type pg from 'pg';
import type { CompiledQuery } from '../sql/sql';
import type { ExportBatch, RowStream } from '../pipeline/row-stream';
import { checkOut, type Lease } from './check-out';
import { distributedContextStatements } from './distributed-context';
import { ExportRowEncoder, type EncoderShape } from './export-row-encoder';
import { contextQuery, sessionResetText, type TransactionSettings } from './pipelined-transaction';
import { RawRowQuery } from './raw-row-query';
import { sendCancel } from './send-cancel';

export type ExportSettings = Omit<TransactionSettings, 'prepared' | 'binaryResults' | 'readOnly'>;

/** Rows per FETCH: a round trip is a small part of a batch's time, and two batches stay small (bench/export.js). */
export const exportBatchRows = 2500;

const endText = `ROLLBACK; ${sessionResetText}`;

interface Batch {
  readonly batch: ExportBatch;
  readonly last: boolean;
}

const lastBatch: Batch = Object.freeze({ batch: Object.freeze({ rows: 0, bytes: 0, chunks: [] }), last: true });

/** Batches read ahead of the one being written. */
const aheadBatches = 2;

export async function openExportCursor(pool: pg.Pool, settings: ExportSettings, query: CompiledQuery, shape: EncoderShape, batchRows = exportBatchRows): Promise<RowStream> {
  // No lease deadline: an export may rightly take longer than any fixed bound; each FETCH is
  // bounded by statement_timeout instead.
  const lease = await checkOut(pool, 0);
  const cursor = new ExportCursor(lease, new ExportRowEncoder(shape), batchRows);
  await cursor.open(settings, query);
  return cursor;
}

class ExportCursor implements RowStream {
  private readonly client: pg.PoolClient;
  /** The FETCH in flight (the prefetch of the next batch), if any. */
  /** Batches fetched or being fetched, oldest first: at most `aheadBatches`, each FETCH sent once the one before it is answered. */
  private readonly queue: Promise<Batch>[] = [];
  private fetching = false;
  private exhausted = false;
  private closed = false;
  private ending: Promise<void> | undefined;
  private readonly fetchText: string;
  private readonly batchRows: number;

  constructor(
    private readonly lease: Lease,
    private readonly encoder: ExportRowEncoder,
    batchRows: number,
  ) {
    this.client = lease.client;
    this.batchRows = Math.max(1, Math.floor(batchRows));
    this.fetchText = `FETCH ${this.batchRows} FROM tablegate_export`;
  }

  async open(settings: ExportSettings, query: CompiledQuery): Promise<void> {
    try {
      await this.client.query('BEGIN READ ONLY');
      const context = contextQuery({ ...settings, readOnly: true });
      await this.client.query({ text: context.text, values: [...context.values] });
      // On Citus, the context again by SET LOCAL, which reaches the workers (distributed-context.ts).
      if (settings.distributed) await this.client.query(distributedContextStatements(settings).join('; '));
      // The plan's text comes from compile (lib/sql/sql.ts): every value is one of its parameters.
      await this.client.query({ text: `DECLARE tablegate_export NO SCROLL CURSOR FOR ${query.text}`, values: [...query.values] });
    } catch (err) {
      await this.end(err);
      throw err;
    }
    // Read the first batch now: an error there is an ordinary error response, not a broken stream.
    const first = await this.fetch();
    this.queue.push(Promise.resolve(first));
  }

  async next(): Promise<ExportBatch | null> {
    if (this.closed || (this.exhausted && this.queue.length === 0)) return null;
    const batch = await (this.queue.shift() ?? this.fetch());
    // Keep PostgreSQL busy while this batch is written: the next FETCHes follow one another
    // without waiting for the writer (PostgreSQL, not Node, bounds an export: bench/export.js).
    let tail = batch.last ? undefined : Promise.resolve(batch);
    for (let i = this.queue.length; i < aheadBatches && tail !== undefined; i++) {
      tail = (this.queue[this.queue.length - 1] ?? tail).then((b) => (b.last || this.closed ? lastBatch : this.fetch()));
      tail.catch(() => undefined); // reported by the call of next() that takes it
      this.queue.push(tail);
    }
    if (batch.batch.rows === 0) return null;
    return batch.batch;
  }

  async close(): Promise<void> {
    if (this.closed) return this.ending;
    this.closed = true;
    let cancelled = false;
    if (this.fetching) {
      // A FETCH is running: stop it on the server instead of waiting for its rows.
      cancelled = true;
      await sendCancel(this.client);
    }
    await Promise.all(this.queue.splice(0).map((b) => b.catch(() => undefined)));
    // After a cancel the client is closed once rolled back: a cancel that reached the server late
    // must never hit the next request's statement on this connection.
    await this.end(undefined, cancelled);
  }

  private async fetch(): Promise<Batch> {
    this.fetching = true;
    // One FETCH at a time (each is sent once the one before it is answered), so the encoder's
    // rows since its last takeBatch are this FETCH's.
    const query = new RawRowQuery(this.fetchText, (payload, start, end) => this.encoder.row(payload, start, end));
    let batch: ExportBatch;
    try {
      void this.client.query(query as unknown as pg.QueryConfig);
      await query.done;
      batch = this.encoder.takeBatch();
    } catch (err) {
      this.encoder.takeBatch();
      this.fetching = false;
      this.exhausted = true;
      // Closed meanwhile: a cancel may be on its way (see close()).
      await this.end(err, this.closed);
      throw err;
    } finally {
      this.fetching = false;
    }
    const last = batch.rows < this.batchRows;
    if (last) {
      this.exhausted = true;
      await this.end(undefined, this.closed);
    }
    return { batch, last };
  }

  /** Ends the transaction and gives the client back, once; discards it when that fails or when asked. */
  private end(failure?: unknown, discard = false): Promise<void> {
    this.ending ??= (async () => {
      try {
        await this.client.query(endText);
        if (discard) this.lease.discard();
        else this.lease.release(failure);
      } catch {
        this.lease.discard();
      }
    })();
    return this.ending;
  }
}
