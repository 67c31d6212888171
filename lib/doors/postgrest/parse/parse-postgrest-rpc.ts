/**
 * GET / HEAD / POST /rpc/{function} in the PostgREST dialect -> the existing `rpc` command
 * (docs/postgrest-dialect.md, "Functions").
 * In: the function name as written (resolved in the request's schema only), the request, the
 * context. Out: one overload and its argument values as one JSON object (the body as received, so
 * numbers stay exact, or the query string's texts), and for a function returning a set of rows
 * the read over them (select, filters, order, limit, offset and embeds, as on a table).
 * Never: a function outside the request's schema, a name not in the schema cache (PGRST202),
 * filters on a result that is not a set of rows (PGRST127), or any SQL.
 *
 * Arguments: POST, a JSON object of named arguments; a function of one unnamed json / jsonb
 * argument, or any function of one json / jsonb argument with `Prefer: params=single-object`,
 * takes the whole body; one unnamed text argument takes a text/plain body. GET and HEAD: the
 * query parameters named like an argument are the arguments (STABLE / IMMUTABLE functions: the call
 * runs read-only, a VOLATILE one fails with 25006, 405, as in PostgREST); the others read the result.
 */
import type { Command, CallAnswer, ReadCommand, RpcArgument } from '../../../command/command';
import { GatewayError } from '../../../errors/gateway-error';
import { PostgrestError } from '../postgrest-error';
import type { GatewayRequest } from '../../../pipeline/gateway-request';
import type { Column, DbFunction, Table } from '../../../schema/schema-types';
import { chooseOverload } from '../../shared/choose-overload';
import { parseJsonBody } from '../../shared/parse-json-body';
import { parsePostgrestRead, type ReadContext } from './parse-postgrest-read';
import { clip } from './parse-select';
import { parsePostgrestPrefer } from './postgrest-prefer';
import { planAccepted } from './postgrest-headers';

type Query = [string, string][];

export function parsePostgrestRpc(name: string, request: GatewayRequest, ctx: ReadContext): Command {
  const overloads = ctx.schema.functions.filter((f) => f.schema === ctx.profile && f.name === name);
  const reading = request.method === 'GET' || request.method === 'HEAD';
  const prefer = parsePostgrestPrefer(request.headers['prefer'], 'call', ctx.config.postgrestVersion);
  const argNames = new Set(overloads.flatMap((f) => f.args.map((a) => a.name).filter((n) => n !== '')));
  const argQuery: Query = [];
  const readQuery: Query = [];
  for (const [k, v] of request.query) (reading && argNames.has(k) ? argQuery : readQuery).push([k, v]);
  if (overloads.length === 0) {
    const given = reading ? argQuery.map(([k]) => k) : [];
    throw new PostgrestError('PGRST202', `Could not find the function ${clip(`${ctx.profile}.${name}`)}(${given.join(', ')}) in the schema cache`, { hint: 'Perhaps the function does not exist, is not in this schema (Content-Profile / Accept-Profile), or the schema cache needs a reload.' });
  }

  const call = reading ? queryCall(overloads, argQuery, ctx) : bodyCall(overloads, request, prefer.singleObject, ctx);
  const fn = call.fn;
  const rows = fn.returnsSet && fn.returns === 'row' ? readOf(fn, request, readQuery, ctx) : noRead(readQuery);
  // Explained (docs/postgrest-dialect.md, "Plans"): a set of rows is read as the plan's `for=` body.
  const plan = rows ? (rows.media === 'plan' && rows.plan ? rows.plan : undefined) : planAccepted(request.headers['accept']);
  const read = rows && plan ? Object.freeze({ ...rows, media: plan.for ?? 'json', plan: null }) : rows;
  const answer: CallAnswer = Object.freeze({
    schema: ctx.profile, readOnly: reading, read, rollback: prefer.rollback, applied: prefer.applied, head: request.method === 'HEAD', counted: prefer.count,
    ...(prefer.maxAffected === null ? {} : { maxAffected: prefer.maxAffected }),
    ...(plan ? { plan } : {}),
  });
  return Object.freeze({ kind: 'rpc', fn, notation: call.notation, args: Object.freeze(call.args), values: call.values, resultFormat: 'text', answer });
}

interface Call {
  readonly fn: DbFunction;
  readonly notation: 'named' | 'positional';
  readonly args: readonly RpcArgument[];
  readonly values: string;
}

/** GET: `?a=1&b=x` -> named arguments, values as text (PostgreSQL converts them with the argument's type); a repeated one is an array. */
function queryCall(overloads: readonly DbFunction[], query: Query, ctx: ReadContext): Call {
  const values: Record<string, string | string[]> = {};
  for (const [k, v] of query) {
    const had = values[k];
    values[k] = had === undefined ? v : Array.isArray(had) ? [...had, v] : [had, v];
  }
  const fit = choose(overloads, { notation: 'named', values }, ctx);
  return { fn: fit.fn, notation: 'named', args: fit.args.map((arg) => ({ arg, key: arg.name })), values: JSON.stringify(values) };
}

function bodyCall(overloads: readonly DbFunction[], request: GatewayRequest, singleObject: boolean, ctx: ReadContext): Call {
  const type = (request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  const hasBody = request.body !== undefined && request.body.trim() !== '';
  const inputs = (f: DbFunction) => f.args;
  if (type === 'text/plain') {
    const fn = overloads.find((f) => inputs(f).length === 1 && inputs(f)[0]!.name === '' && (inputs(f)[0]!.type === 'text' || inputs(f)[0]!.type === 'character varying'));
    if (!fn) throw new PostgrestError('PGRST202', `Could not find the function ${clip(`${overloads[0]!.schema}.${overloads[0]!.name}`)} with a single unnamed text parameter in the schema cache`);
    return whole(fn, JSON.stringify(request.body ?? ''));
  }
  const body = hasBody ? parseJsonBody(request) : undefined;
  // The whole body as one json / jsonb argument.
  const jsonArg = (f: DbFunction, unnamed: boolean) => inputs(f).length === 1 && (inputs(f)[0]!.type === 'json' || inputs(f)[0]!.type === 'jsonb') && (!unnamed || inputs(f)[0]!.name === '');
  const single = overloads.filter((f) => jsonArg(f, !singleObject));
  if (single.length === 1) {
    return whole(single[0]!, body?.text ?? 'null');
  }
  if (singleObject) throw new PostgrestError('PGRST202', `Could not find the function ${clip(`${overloads[0]!.schema}.${overloads[0]!.name}`)} with a single json or jsonb parameter in the schema cache`, { hint: 'Prefer: params=single-object calls a function of one json / jsonb argument.' });
  const value = body?.value ?? {};
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new PostgrestError('PGRST102', 'Invalid body: a function call takes a JSON object of named arguments');
  const fit = choose(overloads, { notation: 'named', values: value as Record<string, unknown> }, ctx);
  return { fn: fit.fn, notation: 'named', args: fit.args.map((arg) => ({ arg, key: arg.name })), values: body?.text ?? '{}' };
}

/** chooseOverload (the default dialect's), its refusals as PostgREST's: PGRST202 no fit, PGRST203 several. */
function choose(overloads: readonly DbFunction[], call: Parameters<typeof chooseOverload>[1], ctx: ReadContext): ReturnType<typeof chooseOverload> {
  try {
    return chooseOverload(overloads, call, true);
  } catch (err) {
    if (!(err instanceof GatewayError)) throw err;
    const f = overloads[0]!;
    const names = call.notation === 'named' ? Object.keys(call.values).map((k) => clip(k, 40)).join(', ') : '';
    const several = err.message.includes('several overloads');
    if (several) throw new PostgrestError('PGRST203', `Could not choose the best candidate function between: ${clip(overloads.map((o) => `${o.schema}.${o.name}(${o.identityArgs})`).join(', '), 400)}`, { hint: 'Try renaming the parameters or the function itself in the database so function overloading can be resolved' });
    throw new PostgrestError('PGRST202', `Could not find the function ${clip(`${f.schema}.${f.name}`)}(${names}) in the schema cache`, { hint: err.hint ?? 'Perhaps you meant to call the function with other arguments.' });
  }
}

/** The one argument takes the whole value (JSON text), passed by position. */
function whole(fn: DbFunction, valueText: string): Call {
  return { fn, notation: 'positional', args: [{ arg: fn.args[0]!, key: '1' }], values: `{"1":${valueText}}` };
}

/** The read over a set of rows: the result's table type when it is a table of the schema cache (embeds work), else its columns. */
function readOf(fn: DbFunction, request: GatewayRequest, query: Query, ctx: ReadContext): ReadCommand {
  const table = ctx.schema.tables.find((t) => (fn.returnType === `${t.schema}.${t.name}` || (fn.returnType === t.name && t.schema === fn.schema)) && t.columns.length === fn.resultColumns.length) ?? resultTable(fn);
  const headers: Record<string, string> = {};
  for (const h of ['accept', 'range', 'range-unit']) if (request.headers[h] !== undefined) headers[h] = request.headers[h]!;
  const count = /(?:^|,)\s*count=(exact|planned|estimated)/.exec(request.headers['prefer'] ?? '')?.[1];
  if (count !== undefined) headers['prefer'] = `count=${count}`;
  return parsePostgrestRead(table, { ...request, method: request.method === 'HEAD' ? 'HEAD' : 'GET', query, headers, body: undefined }, ctx);
}

/** No read parameters on a result that is not a set of rows (except `select=*`). */
function noRead(query: Query): null {
  const other = query.find(([k, v]) => !(k === 'select' && v.trim() === '*'));
  if (other) throw new PostgrestError('PGRST127', 'Feature not implemented', { details: `${clip(other[0], 40)} on a function that does not return a set of rows (docs/postgrest-dialect.md, "Functions").` });
  return null;
}

/** A table-like view of a function's result columns, so that the read grammar and compile apply to them. */
function resultTable(fn: DbFunction): Table {
  const columns: Column[] = fn.resultColumns.map((c, i) =>
    Object.freeze({
      name: c.name, position: i + 1, type: c.type, typeOid: c.typeOid, category: '', elementType: null, nullable: true, hasDefault: false, identity: '' as const, generated: false,
      compareType: c.type, compareElementType: null, compareListType: c.type.endsWith('[]') ? null : `${c.type}[]`,
    }),
  );
  return Object.freeze({
    schema: fn.schema, name: fn.name, kind: 'v', oid: 0, columns: Object.freeze(columns), columnsByName: new Map(columns.map((c) => [c.name, c])),
    primaryKey: [], uniqueKeys: [], foreignKeys: [], referencedBy: [], rlsEnabled: false, rlsForced: false,
  });
}

