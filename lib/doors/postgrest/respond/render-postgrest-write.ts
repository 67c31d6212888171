/**
 * The PostgREST dialect's answer to a write or a function call whose result is not a set of rows
 * (docs/postgrest-dialect.md, "Writes", "Functions"). In: the command, the plan's shape, the raw
 * result, the exposed schemas. Out: status, headers and body:
 *   POST 201, PATCH / PUT / DELETE 200 with `Prefer: return=representation` (the body PostgreSQL
 *   built), else 201 / 204 without a body; `Location` for `return=headers-only` on POST;
 *   Content-Range; Preference-Applied. A call: its JSON value (200), 204 for void.
 * Never: JSON.parse of rows (Location's key values come as text from the statement and are only
 * read from that small object); knowledge of how compile built the statement (positions come from `plan.shape`).
 */
import type { DeleteCommand, InsertCommand, WriteAnswer, RpcCommand, UpdateCommand } from '../../../command/command';
import type { Plan } from '../../../pipeline/plan';
import type { Result } from '../../../pipeline/result';

/** The same as render-postgrest.ts's PostgrestResponse (declared here: that file imports this one). */
interface PostgrestResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string | Uint8Array | null;
}

const contentTypes = {
  json: 'application/json; charset=utf-8',
  object: 'application/vnd.pgrst.object+json; charset=utf-8',
  csv: 'text/csv; charset=utf-8',
} as const;

export function renderPostgrestWrite(command: InsertCommand | UpdateCommand | DeleteCommand, answer: WriteAnswer, plan: Pick<Plan, 'shape'>, result: Result, profile: Record<string, string>): PostgrestResponse {
  const shape = plan.shape;
  if (shape.kind !== 'read') throw new Error(`the plan's result shape is ${shape.kind}, expected read`);
  const row = result.rows[0] ?? [];
  const count = Number(row[shape.count] ?? '0');
  const range = answer.method === 'POST' ? `*/${answer.count ? count : '*'}` : count > 0 ? `0-${count - 1}/${answer.count ? count : '*'}` : `*/${answer.count ? 0 : '*'}`;
  const headers: Record<string, string> = { 'Content-Range': range, ...profile };
  if (answer.applied.length) headers['Preference-Applied'] = answer.applied.join(', ');
  const created = answer.method === 'POST';
  if (answer.returnMode === 'headers-only' && created) {
    const location = locationOf(command, row[shape.body] ?? null);
    if (location !== null) headers['Location'] = location;
  }
  // As PostgREST (Response.hs): a POST is 201 unless it is a merge of duplicates that inserted
  // nothing (200), whatever it returns; a PUT with its representation is 201 when it inserted the
  // row, 200 when it updated it, and 204 without.
  const inserted = shape.inserted === undefined ? undefined : Number(row[shape.inserted] ?? '0');
  const status = created ? (inserted === 0 ? 200 : 201) : answer.method === 'PUT' && inserted !== undefined && inserted > 0 ? 201 : 200;
  if (answer.returnMode !== 'representation') return { status: created ? status : 204, headers, body: null };
  const body = row[shape.body] ?? (answer.media === 'csv' ? '' : answer.media === 'object' ? 'null' : '[]');
  return { status, headers: { 'Content-Type': contentTypes[answer.media], ...headers }, body };
}

/** `/books?id=eq.1`: the first written row's primary key (PostgREST sends it for one row; with several, the first). */
function locationOf(command: InsertCommand | UpdateCommand | DeleteCommand, body: string | null): string | null {
  const pk = command.table.primaryKey;
  if (pk.length === 0 || body === null) return null;
  // Every value is the key column cast to text by the statement: strings only, nothing to round.
  const rows = JSON.parse(body) as Record<string, string | null>[];
  const first = rows[0];
  if (first === undefined) return null;
  const query = pk.map((c) => `${encodeURIComponent(c.name)}=eq.${encodeURIComponent(first[c.name] ?? '')}`).join('&');
  return `/${encodeURIComponent(command.table.name)}?${query}`;
}

/** A call whose result is a value (scalar, one row, void): its JSON, as PostgreSQL built it. */
export function renderCallAnswer(command: RpcCommand, plan: Pick<Plan, 'shape'>, result: Result, profile: Record<string, string>): PostgrestResponse {
  const shape = plan.shape;
  if (shape.kind !== 'call') throw new Error(`the plan's result shape is ${shape.kind}, expected call`);
  // A single value is one row: PostgREST answers `0-0/1` with a count, `0-0/*` without, void included.
  // (A set of scalars is read as rows by the dialect, render-postgrest.ts: its elements are counted.)
  const headers: Record<string, string> = command.fn.returnsSet ? { ...profile } : { 'Content-Range': `0-0/${command.answer?.counted ? '1' : '*'}`, ...profile };
  const applied = command.answer?.applied ?? [];
  if (applied.length) headers['Preference-Applied'] = applied.join(', ');
  if (command.fn.returns === 'void') return { status: 204, headers, body: null };
  const value = result.rows[0]?.[shape.value] ?? null;
  const raw = command.answer?.raw;
  if (raw) {
    // The value as it is; NULL is an empty body, as PostgREST sends it. bytea arrives as hex (compile-rpc.ts).
    const body = value === null ? '' : raw.bytes ? new Uint8Array(Buffer.from(value, 'hex')) : value;
    return { status: 200, headers: { 'Content-Type': rawContentType(raw.type), ...headers }, body };
  }
  return { status: 200, headers: { 'Content-Type': contentTypes.json, ...headers }, body: value ?? 'null' };
}

/** PostgREST's Content-Type for a media type (its MediaType.hs): `; charset=utf-8` on the text types it knows, others as named. */
function rawContentType(type: string): string {
  return type === 'text/plain' || type === 'text/xml' ? `${type}; charset=utf-8` : type;
}
