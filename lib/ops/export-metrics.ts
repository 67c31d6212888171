/**
 * The streamed exports' series of GET /metrics (docs/querying.md, "Exports"): prom-client metrics
 * read from `ExportStats` at scrape time, kept apart from metrics.ts like the replicas' series.
 * Labels come from fixed lists (`format`, `outcome`), never from a request.
 */
import { Counter, Gauge } from 'prom-client';
import { exportFormats, exportOutcomes, type ExportCounts, type ExportStats } from './export-stats';

export function exportMetrics(prefix: string, stats: ExportStats): (Gauge<'format'> | Counter<'format'> | Counter<'format' | 'outcome'>)[] {
  const perFormat = (name: string, help: string, value: (c: ExportCounts) => number) =>
    new Counter({
      name: `${prefix}${name}`, help, labelNames: ['format'], registers: [],
      collect() {
        this.reset();
        for (const format of exportFormats) this.inc({ format }, value(stats.snapshot(format)));
      },
    });
  return [
    perFormat('export_rows_total', 'Rows written by streamed exports, by format.', (c) => c.rows),
    perFormat('export_bytes_total', 'Body bytes written by streamed exports, by format.', (c) => c.bytes),
    new Gauge({
      name: `${prefix}exports_in_flight`, help: 'Streamed exports being written now, by format.', labelNames: ['format'], registers: [],
      collect() {
        for (const format of exportFormats) this.set({ format }, stats.snapshot(format).inFlight);
      },
    }),
    new Counter({
      name: `${prefix}exports_total`, help: 'Streamed exports that ended, by format and outcome.', labelNames: ['format', 'outcome'], registers: [],
      collect() {
        this.reset();
        for (const format of exportFormats) {
          const { finished } = stats.snapshot(format);
          for (const outcome of exportOutcomes) this.inc({ format, outcome }, finished[outcome]);
        }
      },
    }),
  ];
}
