/**
 * The PostgREST dialect's request headers (docs/postgrest-dialect.md, "Schemas", "Media types",
 * "Ranges"): Accept-Profile / Content-Profile -> the exposed schema of the request; Accept -> the
 * response's media type (and the plan's options); Range / Range-Unit -> offset and limit.
 * In: header text. Out: closed values. Never: a schema that is not in `schemas`, a media type or
 * plan option outside the lists below (PGRST106, PGRST107 406, PGRST103 416).
 */
import type { PlanOptions, ReadMedia } from '../../../command/command';
import { PostgrestError } from '../postgrest-error';
import type { GatewayRequest } from '../../../pipeline/gateway-request';
import { clip } from './parse-select';

/** The schema a request addresses: Accept-Profile for GET/HEAD, Content-Profile for the others; the first exposed one by default. */
export function selectSchema(request: GatewayRequest, schemas: readonly string[]): string {
  const reading = request.method === 'GET' || request.method === 'HEAD';
  const header = request.headers[reading ? 'accept-profile' : 'content-profile'];
  if (header === undefined || header.trim() === '') return schemas[0]!;
  const wanted = header.trim();
  if (schemas.includes(wanted)) return wanted;
  throw new PostgrestError('PGRST106', 'Invalid schema: ' + clip(wanted), {
    hint: `Only the following schemas are exposed: ${schemas.join(', ')}`,
    wording12: { message: `The schema must be one of the following: ${schemas.join(', ')}`, hint: null },
  });
}

export interface Accepted {
  readonly media: ReadMedia;
  readonly plan: PlanOptions | null;
  /** `nulls=stripped` on the array or object media type. */
  readonly stripNulls: boolean;
}

const planOptionNames = new Set(['analyze', 'verbose', 'settings', 'buffers', 'wal']);

/** The bodies a plan may be `for=` (PostgREST's spellings), and the body each names. */
const planFor = {
  'application/json': 'json',
  'application/vnd.pgrst.array+json': 'json',
  'application/vnd.pgrst.object+json': 'object',
  'application/vnd.pgrst.object': 'object',
  'text/csv': 'csv',
} as const;

/** The first media type of Accept that the dialect serves (no q-value ranking beyond order, as PostgREST). */
export function parseAccept(header: string | undefined): Accepted {
  if (header === undefined || header.trim() === '') return { media: 'json', plan: null, stripNulls: false };
  for (const entry of splitAccept(header)) {
    const [typeText = '', ...params] = entry.split(';').map((s) => s.trim());
    const type = typeText.toLowerCase();
    const param = (name: string): string | undefined => params.find((p) => p.toLowerCase().startsWith(`${name}=`))?.slice(name.length + 1).replace(/^"(.*)"$/, '$1');
    const stripNulls = param('nulls') === 'stripped';
    switch (type) {
      case 'application/json':
      case 'application/*':
      case '*/*':
      case 'application/vnd.pgrst.array+json':
      case 'application/vnd.pgrst.array':
        return { media: 'json', plan: null, stripNulls };
      case 'application/vnd.pgrst.object+json':
      case 'application/vnd.pgrst.object':
        return { media: 'object', plan: null, stripNulls };
      case 'text/csv':
        return { media: 'csv', plan: null, stripNulls: false };
      case 'application/geo+json':
        return { media: 'geojson', plan: null, stripNulls: false };
      case 'application/vnd.pgrst.plan':
      case 'application/vnd.pgrst.plan+json':
      case 'application/vnd.pgrst.plan+text': {
        const format = type.endsWith('+json') ? 'json' : 'text';
        const forType = (param('for') ?? 'application/json').toLowerCase();
        if (!(forType in planFor)) break;
        const options = (param('options') ?? '').split('|').map((o) => o.trim().toLowerCase()).filter((o) => o !== '');
        const unknown = options.find((o) => !planOptionNames.has(o));
        if (unknown !== undefined) break;
        const has = (o: string): boolean => options.includes(o);
        const body = planFor[forType as keyof typeof planFor];
        const plan: PlanOptions = {
          analyze: has('analyze'), verbose: has('verbose'), settings: has('settings'), buffers: has('buffers'), wal: has('wal'), format,
          ...(body === 'json' ? {} : { for: body }),
          ...(options.length ? { listed: [...new Set(options)] as NonNullable<PlanOptions['listed']> } : {}),
        };
        return { media: 'plan', plan, stripNulls: false };
      }
      default:
        break;
    }
  }
  throw new PostgrestError('PGRST107', `None of these media types are available: ${clip(header, 200)}`, { status: 406 });
}

/**
 * The plan media type in Accept (`application/vnd.pgrst.plan...`) of a write or a call: its
 * options, or undefined when Accept asks for something else first (docs/postgrest-dialect.md, "Plans").
 */
export function planAccepted(accept: string | undefined): PlanOptions | undefined {
  if (accept === undefined || !/application\/vnd\.pgrst\.plan/i.test(accept)) return undefined;
  const accepted = parseAccept(accept);
  return accepted.media === 'plan' ? accepted.plan ?? undefined : undefined;
}

/**
 * A function's own media type (the domain it returns, e.g. `text/plain`) comes before every media
 * type the dialect serves in Accept: its value is answered as it is (docs/postgrest-dialect.md,
 * "Functions"). Order decides, as in PostgREST; `*\/*` and `application/*` count as JSON.
 */
export function rawAccepted(header: string | undefined, type: string): boolean {
  if (header === undefined) return false;
  for (const entry of splitAccept(header)) {
    const entryType = (entry.split(';')[0] ?? '').trim().toLowerCase();
    if (entryType === type) return true;
    if (servedTypes.has(entryType) || entryType.startsWith('application/vnd.pgrst.plan')) return false;
  }
  return false;
}

/** The media types parseAccept answers (besides the plan's). */
const servedTypes = new Set(['application/json', 'application/*', '*/*', 'application/vnd.pgrst.array+json', 'application/vnd.pgrst.array', 'application/vnd.pgrst.object+json', 'application/vnd.pgrst.object', 'text/csv', 'application/geo+json']);

/** Splits Accept at commas that are not inside a quoted parameter (`for="a, b"`). */
function splitAccept(header: string): string[] {
  const out: string[] = [];
  let quoted = false;
  let start = 0;
  for (let i = 0; i < header.length; i++) {
    if (header[i] === '"') quoted = !quoted;
    else if (header[i] === ',' && !quoted) {
      out.push(header.slice(start, i));
      start = i + 1;
    }
  }
  out.push(header.slice(start));
  return out.map((s) => s.trim()).filter((s) => s !== '');
}

/** `Range: <first>-[<last>]` with Range-Unit `items` (or none): offset and, with a last, limit. */
export function parseRange(request: GatewayRequest): { offset: number; limit: number | null } | null {
  const header = request.headers['range'];
  if (header === undefined || header.trim() === '') return null;
  const unit = request.headers['range-unit'];
  if (unit !== undefined && unit.trim().toLowerCase() !== 'items') return null;
  const m = /^\s*(?:items=)?(\d{1,15})-(\d{0,15})\s*$/.exec(header);
  if (!m) throw new PostgrestError('PGRST103', 'Requested range not satisfiable', { details: `The Range header ${clip(header, 40)} is not <first>-[<last>].` });
  const first = Number(m[1]);
  const last = m[2] === '' ? null : Number(m[2]);
  if (last !== null && last < first) throw new PostgrestError('PGRST103', 'Requested range not satisfiable', { details: 'The range ends before it starts.' });
  return { offset: first, limit: last === null ? null : last - first + 1 };
}
