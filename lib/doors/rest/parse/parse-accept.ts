/**
 * The `Accept` header -> the format a list is asked for (docs/querying.md, "Exports").
 * In: the header text, or undefined. Out: `json` (also for no header, `*\/*`, `application/*`
 * and types the gateway does not serve, as before exports existed), `ndjson`
 * (`application/x-ndjson`) or `csv` (`text/csv`), whichever known type has the highest `q`, the
 * first listed on a tie. Never: picks a type the client gave `q=0`.
 */
import type { ExportFormat } from '../../../command/command';

const known: Readonly<Record<string, ExportFormat>> = {
  'application/json': 'json',
  'application/*': 'json',
  '*/*': 'json',
  'application/x-ndjson': 'ndjson',
  'text/csv': 'csv',
};

export function preferredFormat(accept: string | undefined): ExportFormat {
  if (accept === undefined) return 'json';
  let best: { format: ExportFormat; q: number } | undefined;
  for (const range of accept.split(',')) {
    const [type = '', ...params] = range.split(';').map((p) => p.trim().toLowerCase());
    const format = known[type];
    if (format === undefined) continue;
    const qParam = params.find((p) => p.startsWith('q='));
    const q = qParam === undefined ? 1 : Number(qParam.slice(2));
    if (!Number.isFinite(q) || q <= 0) continue;
    if (best === undefined || q > best.q) best = { format, q };
  }
  return best?.format ?? 'json';
}
