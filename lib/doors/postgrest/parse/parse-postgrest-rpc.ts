/**
 * GET / HEAD / POST /rpc/{function} in the PostgREST dialect -> the existing `rpc` command
 * (docs/postgrest-dialect.md, "Functions").
 * In: the function name as written (resolved in the request's schema only), the request, the
 * context. Out: one overload and its argument values as one JSON object (the body as received, so
 * numbers stay exact, or the query string's texts), and the read over its result (select,
 * filters, order, limit, offset and embeds, as on a table; see callRead), or its value as it is
 * for a function returning a media type's domain (rawMediaOf).
 * Never: a function outside the request's schema, a name not in the schema cache (PGRST202),
 * read parameters on a void result (PGRST127), or any SQL.
 *
 * Arguments: POST, a JSON object of named arguments; a function of one unnamed json / jsonb
 * argument, or any function of one json / jsonb argument with `Prefer: params=single-object`,
 * takes the whole body; one unnamed text argument takes a text/plain body, xml a text/xml one,
 * bytea an application/octet-stream one (its bytes). GET and HEAD: the
 * query parameters named like an argument are the arguments (STABLE / IMMUTABLE functions: the call
 * runs read-only, a VOLATILE one fails with 25006, 405, as in PostgREST); the others read the result.
 */
import type { Command, CallAnswer, RawMedia, ReadCommand, RpcArgument } from '../../../command/command';
import { GatewayError } from '../../../errors/gateway-error';
import { PostgrestError } from '../postgrest-error';
import type { GatewayRequest } from '../../../pipeline/gateway-request';
import type { Column, DbFunction, Table } from '../../../schema/schema-types';
import { chooseOverload } from '../../shared/choose-overload';
import { parseJsonBody } from '../../shared/parse-json-body';
import { parsePostgrestRead, type ReadContext } from './parse-postgrest-read';
import { clip } from './parse-select';
import { parsePostgrestPrefer } from './postgrest-prefer';
import { parseAccept, planAccepted, rawAccepted } from './postgrest-headers';

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
  const raw = rawMediaOf(fn, request, readQuery, ctx);
  const rows = raw ? null : callRead(fn, request, readQuery, ctx);
  // Explained (docs/postgrest-dialect.md, "Plans"): a read over the call is explained as the plan's `for=` body.
  const plan = rows ? (rows.media === 'plan' && rows.plan ? rows.plan : undefined) : planAccepted(request.headers['accept']);
  const read = rows && plan ? Object.freeze({ ...rows, media: plan.for ?? 'json', plan: null }) : rows;
  const answer: CallAnswer = Object.freeze({
    schema: ctx.profile, readOnly: reading, read, rollback: prefer.rollback, applied: prefer.applied, head: request.method === 'HEAD', counted: prefer.count,
    ...(prefer.maxAffected === null ? {} : { maxAffected: prefer.maxAffected }),
    ...(plan ? { plan } : {}),
    ...(raw ? { raw } : {}),
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
  const raw = rawBodies.get(type);
  if (raw !== undefined) {
    // The body as the one unnamed argument of the type the media type names (PostgREST's findProc).
    const fn = overloads.find((f) => inputs(f).length === 1 && inputs(f)[0]!.name === '' && raw.types.includes(inputs(f)[0]!.type));
    if (!fn) {
      const name = clip(`${overloads[0]!.schema}.${overloads[0]!.name}`);
      throw new PostgrestError('PGRST202', `Could not find the function ${name} in the schema cache`, { details: `Searched for the function ${name} with a single unnamed ${raw.types[0]} parameter, but no matches were found in the schema cache.` });
    }
    // bytea: the bytes as hex text, which bytea's input function reads back (a bound value, as every argument).
    const text = raw.types[0] === 'bytea' ? `\\x${Buffer.from(request.bodyBytes ?? new Uint8Array()).toString('hex')}` : request.body ?? '';
    return whole(fn, JSON.stringify(text));
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

/** Bodies that are not JSON, and the argument types they go to (the first as PostgREST names it in PGRST202). */
const rawBodies: ReadonlyMap<string, { readonly types: readonly string[] }> = new Map([
  ['text/plain', { types: ['text', 'character varying'] }],
  ['text/xml', { types: ['xml'] }],
  ['application/octet-stream', { types: ['bytea'] }],
]);

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

/**
 * The read over a call's result, as PostgREST reads every call (docs/postgrest-dialect.md,
 * "Functions"): a set of rows always; a set of scalars always (its elements are counted, paged and
 * filtered as rows of one column `pgrst_scalar`); a single row or scalar when the request has read
 * parameters (select, filters, order, limit / offset) or asks for another body than JSON; `void`
 * never (read parameters on it are PGRST127). Null: the call answers its JSON value as it is.
 */
function callRead(fn: DbFunction, request: GatewayRequest, query: Query, ctx: ReadContext): ReadCommand | null {
  if (fn.returns === 'void') return noRead(query);
  if (!fn.returnsSet && readParameter(query) === undefined && !otherBody(request)) return null;
  if (fn.returns === 'row') return readOf(fn, request, query, ctx);
  const read = readOf(fn, request, query, ctx, scalarTable(fn));
  const items = read.root.items;
  // The value is read back from the column `pgrst_scalar` (compile-rpc.ts), as PostgREST reads
  // `_postgrest_t.pgrst_scalar`: a select naming anything else, or renaming it, fails as there.
  const only = items.length === 1 && items[0]!.kind === 'field' && items[0]!.key === SCALAR && items[0]!.aggregate === null && items[0]!.field.path.length === 0;
  if (!only) throw new GatewayError('UNKNOWN_COLUMN', `column _postgrest_t.${SCALAR} does not exist`, { hint: `A function returning scalars is read as one column named ${SCALAR}: select=${SCALAR} (or *), filters and order on ${SCALAR}.` });
  return read;
}

/**
 * A single scalar of a domain named like a media type (`create domain "text/plain" as text`), with
 * Accept asking for that type first and no read parameters: its value as it is, as PostgREST's
 * media type handlers answer it. The domain's base must be bytea (sent as bytes) or a text type
 * (text, varchar, xml, json: sent as text); others keep their JSON (see What differs).
 */
function rawMediaOf(fn: DbFunction, request: GatewayRequest, query: Query, ctx: ReadContext): RawMedia | undefined {
  if (fn.returns !== 'scalar' || fn.returnsSet || readParameter(query) !== undefined) return undefined;
  const type = ctx.schema.types?.get(fn.returnTypeOid);
  if (type === undefined || type.typtype !== 'd' || type.baseOid === null || !MEDIA_TYPE_NAME.test(type.name)) return undefined;
  const bytes = type.baseOid === BYTEA;
  if (!bytes && !TEXT_BASES.has(type.baseOid)) return undefined;
  const name = type.name.toLowerCase();
  return rawAccepted(request.headers['accept'], name) ? Object.freeze({ type: name, bytes }) : undefined;
}

/** A domain's name that is a media type (PostgREST's SchemaCache.hs pattern). */
const MEDIA_TYPE_NAME = /^[A-Za-z0-9.-]+\/[A-Za-z0-9.+-]+$/;
const BYTEA = 17;
/** text, varchar, bpchar, xml, json. */
const TEXT_BASES = new Set([25, 1043, 1042, 142, 114]);

/** PostgREST's name for the one column of a scalar result (its Query/QueryBuilder.hs). */
const SCALAR = 'pgrst_scalar';

/** The first query parameter that reads the result: any other than `select=*`. */
function readParameter(query: Query): [string, string] | undefined {
  return query.find(([k, v]) => !(k === 'select' && v.trim() === '*'));
}

/** Accept names a body other than the JSON value (CSV, a singular object, ...) first: the read builds it (or refuses it, 406). */
function otherBody(request: GatewayRequest): boolean {
  const accept = request.headers['accept'];
  if (accept === undefined || accept.trim() === '' || planAccepted(accept) !== undefined) return false;
  return parseAccept(accept).media !== 'json';
}

/** The read over a set of rows: the result's table type when it is a table of the schema cache (embeds work), else its columns. */
function readOf(fn: DbFunction, request: GatewayRequest, query: Query, ctx: ReadContext, over?: Table): ReadCommand {
  const table = over ?? ctx.schema.tables.find((t) => (fn.returnType === `${t.schema}.${t.name}` || (fn.returnType === t.name && t.schema === fn.schema)) && t.columns.length === fn.resultColumns.length) ?? resultTable(fn);
  const headers: Record<string, string> = {};
  for (const h of ['accept', 'range', 'range-unit']) if (request.headers[h] !== undefined) headers[h] = request.headers[h]!;
  const count = /(?:^|,)\s*count=(exact|planned|estimated)/.exec(request.headers['prefer'] ?? '')?.[1];
  if (count !== undefined) headers['prefer'] = `count=${count}`;
  return parsePostgrestRead(table, { ...request, method: request.method === 'HEAD' ? 'HEAD' : 'GET', query, headers, body: undefined }, ctx);
}

/** No read parameters on a void result (except `select=*`): there is nothing to read. */
function noRead(query: Query): null {
  const other = readParameter(query);
  if (other) throw new PostgrestError('PGRST127', 'Feature not implemented', { details: `${clip(other[0], 40)} on a function that returns void (docs/postgrest-dialect.md, "Functions").` });
  return null;
}

/** A function's scalar result as a table of one column `pgrst_scalar` of its type (named after the function, as in PostgREST's errors). */
function scalarTable(fn: DbFunction): Table {
  return resultTable(fn, [{ name: SCALAR, type: fn.returnType, typeOid: fn.returnTypeOid }]);
}

/** A table-like view of a function's result columns, so that the read grammar and compile apply to them. */
function resultTable(fn: DbFunction, result: readonly { name: string; type: string; typeOid: number }[] = fn.resultColumns): Table {
  const columns: Column[] = result.map((c, i) =>
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

