/**
 * RowStream: the rows of an export as they are read, in batches (docs/querying.md, "Exports").
 * Made by the Database port's `stream` (lib/db/export-cursor.ts), wrapped by execute to map
 * database errors, consumed by lib/doors/rest/respond/write-export.ts. The consumer asks for the next batch
 * only once it has written the previous one, so memory holds a batch or two, whatever the count.
 */
export interface ExportBatch {
  readonly rows: number;
  /** The chunks' length in total. */
  readonly bytes: number;
  readonly chunks: readonly Buffer[];
}

export interface RowStream {
  /**
   * The next batch, already in the response's format (plan.shape: its CSV lines, NDJSON lines or
   * JSON array members, commas included; lib/db/export-row-encoder.ts). Null once all rows are
   * read (the transaction is then over and the connection released). Rejects when the database
   * fails mid-stream; the connection is released then too.
   */
  next(): Promise<ExportBatch | null>;
  /**
   * Stops early (the client went away, or writing failed): cancels a fetch that is running, ends
   * the transaction and releases the connection. Safe to call at any time, more than once.
   */
  close(): Promise<void>;
}
