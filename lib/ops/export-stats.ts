/**
 * Counters of streamed exports (docs/querying.md, "Exports"), shown by GET /metrics in the
 * Prometheus text format: rows and bytes written, exports in flight, and finished exports by
 * outcome, each by format. In: what lib/http/write-export.ts reports as it writes. Out: the
 * exposition lines. Never: takes a label value from a request (formats and outcomes are fixed).
 */
export type ExportOutcome = 'complete' | 'client_closed' | 'error';

const formats = ['json', 'ndjson', 'csv'] as const;
type Format = (typeof formats)[number];
const outcomes: readonly ExportOutcome[] = ['complete', 'client_closed', 'error'];

interface Counts {
  rows: number;
  bytes: number;
  inFlight: number;
  finished: Record<ExportOutcome, number>;
}

export class ExportStats {
  private readonly counts = new Map<Format, Counts>(formats.map((f) => [f, { rows: 0, bytes: 0, inFlight: 0, finished: { complete: 0, client_closed: 0, error: 0 } }]));

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

  /** A snapshot, for tests and for the move onto another metrics library. */
  snapshot(format: Format): Readonly<Counts> {
    const c = this.of(format);
    return { ...c, finished: { ...c.finished } };
  }

  render(): string {
    const lines: string[] = [];
    const series = (name: string, type: string, help: string, value: (c: Counts) => number): void => {
      lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
      for (const f of formats) lines.push(`${name}{format="${f}"} ${value(this.of(f))}`);
    };
    series('tablegate_export_rows_total', 'counter', 'Rows written by streamed exports, by format.', (c) => c.rows);
    series('tablegate_export_bytes_total', 'counter', 'Body bytes written by streamed exports, by format.', (c) => c.bytes);
    series('tablegate_exports_in_flight', 'gauge', 'Streamed exports being written now, by format.', (c) => c.inFlight);
    lines.push('# HELP tablegate_exports_total Streamed exports that ended, by format and outcome.', '# TYPE tablegate_exports_total counter');
    for (const f of formats) for (const o of outcomes) lines.push(`tablegate_exports_total{format="${f}",outcome="${o}"} ${this.of(f).finished[o]}`);
    return `${lines.join('\n')}\n`;
  }

  private of(format: Format): Counts {
    return this.counts.get(format)!;
  }
}
