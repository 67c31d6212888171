/**
 * Command + Plan.shape + Result -> the PostgREST dialect's response: status, headers and body
 * (docs/postgrest-dialect.md). Reads: the body PostgreSQL built (a JSON array, one object, CSV,
 * a plan), `Content-Range`, 200 / 206 / 416 as PostgREST decides them, 406 for a singular
 * response that is not one row. In: the command, the plan's shape, the raw result and the
 * exposed schemas. Never: JSON.parse / JSON.stringify of rows; knowledge of how compile built the
 * statement (positions come from `plan.shape`).
 * Writes and calls whose result is a value are rendered by render-postgrest-write.ts; a call
 * returning a set of rows is rendered as a read of those rows.
 */
import type { Command, PlanOptions, ReadCommand } from '../../../command/command';
import { PostgrestError } from '../postgrest-error';
import { bodyMediaTypes } from '../body-media-types';
import type { Plan, ReadShape } from '../../../pipeline/plan';
import type { Result } from '../../../pipeline/result';
import { renderCallAnswer, renderPostgrestWrite } from './render-postgrest-write';

export interface PostgrestResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  /** Null: no body. Bytes: a function's bytea value sent as it is. */
  readonly body: string | Uint8Array | null;
}

export function renderPostgrest(command: Command, plan: Pick<Plan, 'shape'>, result: Result, schemas: readonly string[]): PostgrestResponse {
  if (command.kind === 'insert' || command.kind === 'update' || command.kind === 'delete' || command.kind === 'rpc') {
    const answer = command.answer;
    if (!answer) throw new Error(`the postgrest dialect renders no ${command.kind} command of the default dialect`);
    const profile: Record<string, string> = schemas.length > 1 ? { 'Content-Profile': answer.schema } : {};
    if (answer.plan) return renderPlan(answer.plan, plan, result, profile);
    if (command.kind !== 'rpc') return renderPostgrestWrite(command, command.answer!, plan, result, profile);
    const read = command.kind === 'rpc' ? command.answer?.read : null;
    if (!read) return renderCallAnswer(command, plan, result, profile);
    if (plan.shape.kind !== 'read') throw new Error(`the plan's result shape is ${plan.shape.kind}, expected read`);
    // A function returning one value answers one row, whatever its filters left (PostgREST's page_total of 1).
    const response = renderRead(read, plan.shape, result, profile, !command.fn.returnsSet);
    const applied = command.answer?.applied ?? [];
    return applied.length ? { ...response, headers: { ...response.headers, 'Preference-Applied': applied.join(', ') } } : response;
  }
  if (command.kind !== 'read') throw new Error(`the postgrest dialect renders no ${command.kind} command`);
  const profile: Record<string, string> = schemas.length > 1 ? { 'Content-Profile': command.schema } : {};
  if (command.media === 'plan' && command.plan) return renderPlan(command.plan, plan, result, profile);
  const shape = plan.shape;
  if (shape.kind !== 'read') throw new Error(`the plan's result shape is ${shape.kind}, expected read`);
  const response = renderRead(command, shape, result, profile);
  return command.applied ? { ...response, headers: { ...response.headers, 'Preference-Applied': command.applied.join(', ') } } : response;
}

const contentTypes = {
  json: 'application/json; charset=utf-8',
  object: 'application/vnd.pgrst.object+json; charset=utf-8',
  csv: 'text/csv; charset=utf-8',
  geojson: 'application/geo+json; charset=utf-8',
} as const;

function renderRead(command: ReadCommand, at: ReadShape, result: Result, profile: Record<string, string>, single = false): PostgrestResponse {
  const row = result.rows[0] ?? [];
  const count = single ? 1 : Number(row[at.count] ?? '0');
  const totalText = row[at.total] ?? null;
  const total = totalText === null ? null : Number(totalText);
  const offset = command.root.offset;
  // PostgREST's Content-Range (RangeQuery.contentRangeH): `first-last/total`, with `*` for the
  // range when the page is empty or the total is 0, and for the total when none was counted.
  const range = count > 0 && total !== 0 ? `${offset}-${offset + count - 1}/${total ?? '*'}` : `*/${total ?? '*'}`;
  if (command.media === 'object' && count !== 1) {
    throw new PostgrestError('PGRST116', 'Cannot coerce the result to a single JSON object', { details: `The result contains ${count} rows` });
  }
  // PostgREST (RangeQuery.rangeStatus): an offset past the total is unsatisfiable (416); an
  // offset equal to it is an empty partial page (206 `*/total`); fewer rows than the total is partial.
  if (total !== null && offset > total) {
    throw new PostgrestError('PGRST103', 'Requested range not satisfiable', { details: `An offset of ${offset} was requested, but there are only ${total} rows.`, headers: { 'Content-Range': `*/${total}` } });
  }
  const status = total !== null && count < total ? 206 : 200;
  const media = command.media === 'plan' || command.media === 'page' ? 'json' : command.media;
  const body = row[at.body] ?? (media === 'csv' ? '' : '[]');
  return { status, headers: { 'Content-Type': contentTypes[media], 'Content-Range': range, ...profile }, body };
}

/**
 * EXPLAIN's answer with PostgREST's media type: `application/vnd.pgrst.plan+json; for="<the body
 * explained>"; options=<as listed>; charset=utf-8` (`+text` for the text format).
 */
function renderPlan(options: PlanOptions, plan: Pick<Plan, 'shape'>, result: Result, profile: Record<string, string>): PostgrestResponse {
  const shape = plan.shape;
  if (shape.kind !== 'value') throw new Error(`the plan's result shape is ${shape.kind}, expected value`);
  const text = options.format === 'text';
  // EXPLAIN (FORMAT TEXT) answers one row per line; FORMAT JSON one value.
  const body = text ? result.rows.map((r) => r[shape.value] ?? '').join('\n') : (result.rows[0]?.[shape.value] ?? '[]');
  const listed = options.listed?.length ? `; options=${options.listed.join('|')}` : '';
  const type = `application/vnd.pgrst.plan+${text ? 'text' : 'json'}; for="${bodyMediaTypes[options.for ?? 'json']}"${listed}; charset=utf-8`;
  return { status: 200, headers: { 'Content-Type': type, ...profile }, body };
}
