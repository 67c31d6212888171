/**
 * POST / PATCH / PUT / DELETE /{table} in the PostgREST dialect -> the existing `insert`,
 * `update` and `delete` commands (docs/postgrest-dialect.md, "Writes").
 * In: the table (resolved in the request's schema), the request, the context. Out: a frozen
 * command whose every name is a schema-cache object; `postgrest` says how to answer (the written
 * rows read back through a read level: `select` with embeds), `where` which rows PATCH / DELETE
 * change. Never: a write without a filter while `postgrest_unfiltered_writes` is off, a body key,
 * `columns=` name or `on_conflict` column that is not a column (PGRST204 / 400), a preference it
 * cannot honour under `handling=strict` (PGRST122), or any SQL.
 *
 * Query parameters: `select` and embedded-level parameters (`books.order=...`) shape the returned
 * representation; `columns` (POST, PATCH) names the columns taken from the body; `on_conflict`
 * (POST) the conflict target of an upsert; every other root parameter is a filter (PATCH,
 * DELETE; PUT: exactly the primary key with `eq`).
 */
import type { Command, Condition, OnConflict, PlanOptions, WriteAnswer, ReadNode } from '../../../command/command';
import { GatewayError } from '../../../errors/gateway-error';
import { PostgrestError } from '../postgrest-error';
import type { GatewayRequest } from '../../../pipeline/gateway-request';
import type { Column, Table } from '../../../schema/schema-types';
import { batchRowsOf, bodyRowsOf } from '../../shared/body-rows';
import { parseJsonBody } from '../../shared/parse-json-body';
import { parseOnConflict } from '../../shared/parse-on-conflict';
import { resolveBodyColumns } from '../../shared/resolve-body-columns';
import { parsePostgrestRead, type ReadContext } from './parse-postgrest-read';
import { bad } from './parse-condition';
import { clip } from './parse-select';
import { parsePostgrestPrefer, type PostgrestPrefer } from './postgrest-prefer';
import { planAccepted } from './postgrest-headers';
import { bodyMediaTypes } from '../body-media-types';
import { splitNames } from './quoted-name';

type Query = [string, string][];

/** Rows x columns of one `Prefer: missing=default` batch (each is one bound parameter). */
export const maxMissingDefaultValues = 30000;

export function parsePostgrestWrite(table: Table, request: GatewayRequest, ctx: ReadContext): Command {
  const method = request.method as WriteAnswer['method'];
  const prefer = parsePostgrestPrefer(request.headers['prefer'], method === 'POST' ? 'insert' : 'write', ctx.config.postgrestVersion);
  const { readQuery, whereQuery, columnsText, onConflictText } = splitQuery(request, method);
  const where = whereQuery.length ? conditionsOf(table, whereQuery, ctx, request) : [];
  const plan = planAccepted(request.headers['accept']);
  const answer = (node: ReadNode, explicitSelect: boolean, media: WriteAnswer['media']): WriteAnswer =>
    Object.freeze({ schema: ctx.profile, returnMode: prefer.returnMode, node, media, maxAffected: prefer.maxAffected, rollback: prefer.rollback, method, applied: prefer.applied, explicitSelect, count: prefer.count, ...(plan ? { plan } : {}) });
  const representation = (): { node: ReadNode; explicit: boolean; media: WriteAnswer['media'] } => representationOf(table, readQuery, request, ctx, prefer, plan);

  switch (method) {
    case 'POST':
    case 'PUT': {
      if (method === 'POST' && where.length) throw bad(whereQuery[0]![0], 'a POST takes no filters');
      const body = parseJsonBody(request);
      if (method === 'PUT' && Array.isArray(body.value)) throw new PostgrestError('PGRST102', 'Invalid body for PUT: a single JSON object is expected');
      const { batch, rows } = batchRowsOf(body.value, ctx.config.maxBatchSize);
      const bodyColumns = pgrstColumns(table, () => resolveBodyColumns(table, columnsText === undefined ? rows : [], batch));
      const columns = columnsText === undefined ? bodyColumns : namedColumns(table, columnsText);
      let onConflict: OnConflict | null;
      if (method === 'PUT') {
        onConflict = putConflict(table, where, rows[0]);
      } else {
        const headers = onConflictText === undefined ? {} : { 'x-on-conflict': splitNames(onConflictText).join(',') };
        onConflict = parseOnConflict(table, headers, prefer.raw);
      }
      if (prefer.missingDefault && columns.length === 0) throw bad('Prefer: missing=default', 'missing=default needs the columns (columns= or the body keys)');
      // missing=default binds each value of each row (compile-insert.ts): stay far below PostgreSQL's 65,535 parameters.
      if (prefer.missingDefault && batch && rows.length * columns.length > maxMissingDefaultValues) {
        throw new GatewayError('PAYLOAD_TOO_LARGE', `Prefer: missing=default takes at most ${maxMissingDefaultValues} values (rows x columns) in one request.`, { details: { values: rows.length * columns.length, max: maxMissingDefaultValues }, hint: 'Split the batch into several requests.' });
      }
      const r = representation();
      const command = {
        kind: 'insert' as const,
        table,
        columns,
        body: body.text,
        rows: bodyRowsOf(body.text, batch),
        batch,
        rowCount: rows.length,
        returning: [] as readonly Column[],
        explicitReturning: false,
        onConflict,
        answer: answer(r.node, r.explicit, r.media),
        ...(prefer.missingDefault && batch ? { missingDefault: true } : {}),
      };
      return Object.freeze(command);
    }
    case 'PATCH': {
      requireFilter(where, ctx, 'UPDATE');
      const body = parseJsonBody(request);
      if (typeof body.value !== 'object' || body.value === null || Array.isArray(body.value)) throw new PostgrestError('PGRST102', 'Invalid body: a PATCH body is a single JSON object');
      const bodyColumns = pgrstColumns(table, () => resolveBodyColumns(table, columnsText === undefined ? [body.value] : [], false));
      const columns = columnsText === undefined ? bodyColumns : namedColumns(table, columnsText);
      if (columns.length === 0) throw new PostgrestError('PGRST102', 'Invalid body: the PATCH body names no column to change');
      const r = representation();
      return Object.freeze({ kind: 'update', table, key: [], where, columns, body: body.text, row: bodyRowsOf(body.text, false)[0]!, returning: [], explicitReturning: false, answer: answer(r.node, r.explicit, r.media) });
    }
    case 'DELETE': {
      requireFilter(where, ctx, 'DELETE');
      if (request.body !== undefined && request.body.trim() !== '') throw new PostgrestError('PGRST102', 'Invalid body: a DELETE takes no body');
      const r = representation();
      return Object.freeze({ kind: 'delete', table, key: [], where, returning: [], explicitReturning: false, answer: answer(r.node, r.explicit, r.media) });
    }
    default:
      throw new PostgrestError('PGRST117', `Unsupported HTTP method: ${clip(method, 16)}`);
  }
}

/** Which query parameters shape the representation, which select the rows, and the write's own. */
function splitQuery(request: GatewayRequest, method: string): { readQuery: Query; whereQuery: Query; columnsText: string | undefined; onConflictText: string | undefined } {
  const readQuery: Query = [];
  const whereQuery: Query = [];
  let columnsText: string | undefined;
  let onConflictText: string | undefined;
  for (const [key, value] of request.query) {
    const head = key.split('->')[0]!;
    if (key === 'columns' && (method === 'POST' || method === 'PATCH' || method === 'PUT')) {
      if (columnsText !== undefined) throw bad(key, 'columns is given more than once');
      columnsText = value;
    } else if (key === 'on_conflict' && method === 'POST') {
      if (onConflictText !== undefined) throw bad(key, 'on_conflict is given more than once');
      onConflictText = value;
    } else if (key === 'select' || key === 'order') {
      readQuery.push([key, value]);
    } else if (key === 'limit' || key === 'offset') {
      throw new PostgrestError('PGRST127', 'Feature not implemented', { details: `${key} on a ${method}: limited updates and deletes are not served (docs/postgrest-dialect.md, "Writes").` });
    } else if (head.includes('.') && key !== 'not.or' && key !== 'not.and') {
      // `books.order=...`, `books.title=eq.x`: a level of the returned representation.
      readQuery.push([key, value]);
    } else {
      whereQuery.push([key, value]);
    }
  }
  return { readQuery, whereQuery, columnsText, onConflictText };
}

/** The root filters, parsed by the read grammar on the written table (the same conditions a GET takes). */
function conditionsOf(table: Table, query: Query, ctx: ReadContext, request: GatewayRequest): readonly Condition[] {
  const read = parsePostgrestRead(table, readRequest(request, query, {}), ctx);
  return read.root.where;
}


/** The representation: the read level of `select` over the written rows (no page), or what the answer needs without one. */
function representationOf(table: Table, query: Query, request: GatewayRequest, ctx: ReadContext, prefer: PostgrestPrefer, plan: PlanOptions | undefined): { node: ReadNode; explicit: boolean; media: WriteAnswer['media'] } {
  const explicit = query.some(([k]) => k === 'select');
  if (prefer.returnMode !== 'representation') {
    // headers-only: the primary key (as text, so no number is rounded) for Location.
    const items = prefer.returnMode === 'headers-only' && request.method === 'POST' ? table.primaryKey.map((column) => Object.freeze({ kind: 'field' as const, key: column.name, field: { column, path: [] }, cast: 'text' as const, aggregate: null, resultCast: null })) : [];
    return { node: Object.freeze({ table, items: Object.freeze(items), explicitSelect: true, where: [], order: [], limit: null, offset: 0 }), explicit: false, media: 'json' };
  }
  // Explained: the representation the plan is `for=` (its body is the statement's, not sent).
  const accept = plan ? bodyMediaTypes[plan.for ?? 'json'] : request.headers['accept'];
  const read = parsePostgrestRead(table, readRequest(request, query, accept === undefined ? {} : { accept }), ctx);
  if (read.media === 'plan' || read.media === 'geojson' || read.media === 'page') throw new PostgrestError('PGRST107', `None of these media types are available: ${clip(accept ?? '', 80)}`, { status: 406 });
  return { node: Object.freeze({ ...read.root, limit: null, offset: 0 }), explicit, media: read.media };
}

function readRequest(request: GatewayRequest, query: Query, headers: Record<string, string>): GatewayRequest {
  return { ...request, method: 'GET', query, headers, body: undefined };
}

function requireFilter(where: readonly Condition[], ctx: ReadContext, verb: 'UPDATE' | 'DELETE'): void {
  if (where.length > 0 || ctx.config.postgrestUnfilteredWrites) return;
  throw new PostgrestError('21000', `${verb} requires a WHERE clause`, { hint: 'Add a filter (e.g. ?id=eq.1); postgrest_unfiltered_writes = true allows writes to every visible row (docs/postgrest-dialect.md, "Writes").' });
}

/** `columns="a","b"` -> columns of the table (PGRST204 for a name that is not one). */
function namedColumns(table: Table, text: string): readonly Column[] {
  const names = splitNames(text);
  if (names.length > 1600 || names.some((n) => n === '')) throw bad('columns', 'columns is a comma-separated list of at most 1600 column names');
  const columns: Column[] = [];
  for (const name of names) {
    const column = table.columnsByName.get(name);
    if (!column) throw unknownColumn(table, name);
    if (column.generated || column.identity === 'a') throw new GatewayError('VALIDATION_ERROR', `Column \`${column.name}\` is computed by PostgreSQL; it cannot be written.`, { details: { table: table.name, column: column.name } });
    if (!columns.includes(column)) columns.push(column);
  }
  return Object.freeze(table.columns.filter((c) => columns.includes(c)));
}

/** The body's columns, an unknown key answered as PostgREST does (PGRST204). */
function pgrstColumns(table: Table, resolve: () => readonly Column[]): readonly Column[] {
  try {
    return resolve();
  } catch (err) {
    if (err instanceof GatewayError && err.code === 'UNKNOWN_COLUMN') {
      const details = err.details as { column?: string } | undefined;
      throw unknownColumn(table, details?.column ?? '?');
    }
    throw err;
  }
}

function unknownColumn(table: Table, name: string): PostgrestError {
  return new PostgrestError('PGRST204', `Could not find the '${clip(name, 63)}' column of '${table.name}' in the schema cache`);
}


/**
 * PUT: the filters are exactly `pk=eq.value` for each primary-key column, and the body carries the
 * same values (PGRST105 / PGRST115 otherwise); an upsert on the primary key that updates every column of the body.
 */
function putConflict(table: Table, where: readonly Condition[], row: unknown): OnConflict {
  const pk = table.primaryKey;
  const eq = where.filter((c): c is Extract<Condition, { kind: 'compare' }> => c.kind === 'compare' && c.op === 'eq' && !c.negate && c.field.path.length === 0);
  const exact = pk.length > 0 && eq.length === where.length && pk.every((col) => eq.filter((c) => c.field.column === col).length === 1) && eq.length === pk.length;
  if (!exact) throw new PostgrestError('PGRST105', 'Filters must include all and only primary key columns with \'eq\' operators');
  if (typeof row !== 'object' || row === null) throw new PostgrestError('PGRST102', 'Invalid body for PUT: a single JSON object is expected');
  const values = row as Record<string, unknown>;
  for (const c of eq) {
    const given = values[c.field.column.name];
    if (given === undefined || given === null || String(given) !== c.value) throw new PostgrestError('PGRST115', 'Payload values do not match URL in primary key column(s)');
  }
  return Object.freeze({ columns: pk, action: 'update' });
}
