/**
 * Counters of streamed exports (docs/querying.md, "Exports"): rows and bytes written, exports in
 * flight, and finished exports by outcome, each by format. In: what lib/doors/rest/respond/write-export.ts
 * reports as it writes. Out: snapshots, read at scrape time by lib/ops/export-metrics.ts. Never:
 * takes a label value from a request (formats and outcomes are fixed).
 */
export type ExportOutcome = 'complete' | 'client_closed' | 'error';

export const exportFormats = ['json', 'ndjson', 'csv'] as const;
type Format = (typeof exportFormats)[number];
export const exportOutcomes: readonly ExportOutcome[] = ['complete', 'client_closed', 'error'];

interface Counts {
  rows: number;
  bytes: number;
  inFlight: number;
  finished: Record<ExportOutcome, number>;
}

/** Rows, bytes, in flight and finished exports of one format. */
export interface ExportCounts {
  readonly rows: number;
  readonly bytes: number;
  readonly inFlight: number;
  readonly finished: Readonly<Record<ExportOutcome, number>>;
}

export class ExportStats {
  private readonly counts = new Map<Format, Counts>(exportFormats.map((f) => [f, { rows: 0, bytes: 0, inFlight: 0, finished: { complete: 0, client_closed: 0, error: 0 } }]));

  started(format: Format): void {
    this.of(format).inFlight++;
  }

  wrote(format: Format, rows: number, bytes: number): void {
    const c = this.of(format);
    c.rows += rows;
    c.bytes += bytes;
  }

  finished(format: Format, outcome: ExportOutcome): void {
    const c = this.of(format);
    c.inFlight--;
    c.finished[outcome]++;
  }

  /** A copy of one format's counts, read by a scrape. */
  snapshot(format: Format): ExportCounts {
    const c = this.of(format);
    return { ...c, finished: { ...c.finished } };
  }

  private of(format: Format): Counts {
    return this.counts.get(format)!;
  }
}
