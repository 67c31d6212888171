/**
 * The RPC path without a database: name resolution, overload choice, positional splitting, the
 * function allow-list, and the SQL compile produces (values bound once, identifiers quoted, types
 * from the catalog only).
 */
import type { RpcCommand } from '../../../lib/command/command';
import { compileSql, catalogType } from '../../../lib/sql/sql';
import type { DbFunction, FunctionArg, SchemaCache } from '../../../lib/schema/schema-types';
import { createAllowListStage } from '../../../lib/stages/allow-list/create-allow-list-stage';
import { parseFunctionAllowList } from '../../../lib/stages/allow-list/function-allow-list';
import { compileRpc } from '../../../lib/stages/compile/compile-rpc';
import { chooseOverload } from '../../../lib/doors/shared/choose-overload';
import { parseRpc } from '../../../lib/doors/rest/parse/parse-rpc';
import { resolveFunction } from '../../../lib/doors/rest/parse/resolve-function';
import { splitJsonArray } from '../../../lib/doors/shared/split-json-array';
import type { CommandContext } from '../../../lib/pipeline/stage-types';
import { testConfig } from '../auth/config-fixture';
import { GatewayError } from '../../../lib/errors/gateway-error';
import { thrown as thrownOf } from '../support/thrown';

const thrown = (fn: () => unknown): GatewayError => thrownOf(fn, GatewayError);

const arg = (name: string, type: string, category: string, extra: Partial<FunctionArg> = {}): FunctionArg => ({ name, type, typeOid: 0, category, mode: 'i', hasDefault: false, variadic: false, ...extra });

function fn(schema: string, name: string, args: FunctionArg[], extra: Partial<DbFunction> = {}): DbFunction {
  return {
    schema,
    name,
    oid: 0,
    identityArgs: args.map((a) => `${a.variadic ? 'VARIADIC ' : ''}${a.name} ${a.type}`.trim()).join(', '),
    args,
    defaults: args.filter((a) => a.hasDefault).length,
    variadic: args.some((a) => a.variadic),
    returnType: 'integer',
    returnTypeOid: 23,
    returnsSet: false,
    returns: 'scalar',
    resultColumns: [],
    volatility: 'i',
    executable: true,
    ...extra,
  };
}

const addPublic = fn('public', 'add', [arg('a', 'integer', 'N'), arg('b', 'integer', 'N')]);
const addExtra = fn('extra', 'add', [arg('a', 'integer', 'N'), arg('b', 'integer', 'N')]);
const describeInt = fn('public', 'describe', [arg('v', 'integer', 'N')]);
const describeText = fn('public', 'describe', [arg('v', 'text', 'S')]);
const greet = fn('public', 'greet', [arg('name', 'text', 'S'), arg('greeting', 'text', 'S', { hasDefault: true })]);
const sumAll = fn('public', 'sum_all', [arg('label', 'text', 'S'), arg('nums', 'numeric[]', 'A', { mode: 'v', variadic: true })]);
const doubleIt = fn('public', 'double_it', [arg('', 'integer', 'N')]);
const onlyExtra = fn('extra', 'only_here', [], { returnType: 'interval', returnTypeOid: 1186 });
const rows = fn('public', 'orders_by', [arg('p status', 'text', 'S')], { returns: 'row', returnsSet: true, resultColumns: [{ name: 'id', type: 'bigint', typeOid: 20 }] });

const schema: SchemaCache = {
  schemas: ['public', 'extra'],
  tables: [],
  tablesByName: new Map(),
  functions: [addPublic, describeInt, describeText, greet, sumAll, doubleIt, rows, addExtra, onlyExtra],
  loadedAt: new Date(0),
};

const request = (body?: string, headers: Record<string, string> = {}) => ({
  id: 'r',
  method: 'POST',
  segments: [],
  rawSegments: [],
  query: [],
  headers: { 'content-type': 'application/json', ...headers },
  body,
  loopback: true,
});

const parse = (name: string, body?: string, config = testConfig(), headers: Record<string, string> = {}): RpcCommand => parseRpc(schema, name, request(body, headers), config);

describe('resolveFunction', () => {
  it('resolves bare names through the schemas in order and qualified names in their schema only', () => {
    expect(resolveFunction(schema, 'add', false)).toEqual([addPublic]);
    expect(resolveFunction(schema, 'extra.add', false)).toEqual([addExtra]);
    expect(resolveFunction(schema, 'only_here', false)).toEqual([onlyExtra]);
    expect(resolveFunction(schema, 'describe', false)).toEqual([describeInt, describeText]);
    expect(thrown(() => resolveFunction(schema, 'public.only_here', false))).toMatchObject({ code: 'NOT_FOUND' });
    expect(thrown(() => resolveFunction(schema, 'pg_catalog.now', false))).toMatchObject({ code: 'NOT_FOUND' });
    expect(thrown(() => resolveFunction(schema, 'ad', false))).toMatchObject({ code: 'NOT_FOUND', hint: 'Did you mean `add`?' });
  });

  it('qualifies by an exposed schema whose name needs quoting, a dot in it included', () => {
    const dotted = fn('a.b', 'f', []);
    const spaced = fn('Mixed Case', 'f', []);
    const quoted: SchemaCache = { ...schema, schemas: ['public', 'a', 'a.b', 'Mixed Case'], functions: [fn('a', 'b.f', []), dotted, spaced] };
    expect(resolveFunction(quoted, 'a.b.f', false)).toEqual([dotted]);
    expect(resolveFunction(quoted, 'Mixed Case.f', false)).toEqual([spaced]);
    expect(thrown(() => resolveFunction(quoted, 'a.b.g', false))).toMatchObject({ code: 'NOT_FOUND' });
  });

  it('requires a schema with rpc_require_schema_qualified, naming the qualified form', () => {
    expect(thrown(() => resolveFunction(schema, 'only_here', true))).toMatchObject({ code: 'RPC_NAME_NOT_QUALIFIED', hint: 'Call /rpc/extra.only_here.' });
    expect(thrown(() => resolveFunction(schema, 'nothing', true))).toMatchObject({ code: 'RPC_NAME_NOT_QUALIFIED' });
    expect(resolveFunction(schema, 'extra.only_here', true)).toEqual([onlyExtra]);
  });
});

describe('chooseOverload', () => {
  it('fits by shape: named keys, defaults, positional prefixes, variadic tails', () => {
    expect(chooseOverload([greet], { notation: 'named', values: { name: 'x' } }, false).args.map((a) => a.name)).toEqual(['name']);
    expect(chooseOverload([greet], { notation: 'positional', values: ['x', 'y'] }, false).args.map((a) => a.name)).toEqual(['name', 'greeting']);
    expect(chooseOverload([sumAll], { notation: 'positional', values: ['t', 1, 2, 3] }, false).args.map((a) => a.name)).toEqual(['label', 'nums']);
    expect(thrown(() => chooseOverload([sumAll], { notation: 'positional', values: ['t'] }, false))).toMatchObject({ code: 'NOT_FOUND' });
    expect(thrown(() => chooseOverload([greet], { notation: 'named', values: { greeting: 'x' } }, false))).toMatchObject({ code: 'NOT_FOUND' });
    expect(thrown(() => chooseOverload([doubleIt], { notation: 'named', values: { '': 1 } }, false))).toMatchObject({ code: 'NOT_FOUND' });
  });

  it('picks the overload whose categories match the JSON types, and refuses ties', () => {
    expect(chooseOverload([describeInt, describeText], { notation: 'positional', values: [1] }, false).fn).toBe(describeInt);
    expect(chooseOverload([describeInt, describeText], { notation: 'positional', values: ['1'] }, false).fn).toBe(describeText);
    const tie = thrown(() => chooseOverload([describeInt, describeText], { notation: 'positional', values: [null] }, false));
    expect(tie).toMatchObject({ code: 'RPC_SIGNATURE_MISMATCH', details: { signatures: ['public.describe(v integer)', 'public.describe(v text)'] } });
  });

  it('reports unknown named arguments: 404 by default, 400 RPC_SIGNATURE_MISMATCH under rpc_signature_check', () => {
    const call = { notation: 'named' as const, values: { a: 1, c: 2 } };
    expect(thrown(() => chooseOverload([addPublic], call, false))).toMatchObject({ code: 'NOT_FOUND', details: { unknown_arguments: ['c'] } });
    expect(thrown(() => chooseOverload([addPublic], call, true))).toMatchObject({ code: 'RPC_SIGNATURE_MISMATCH', details: { unknown_arguments: ['c'], signatures: ['public.add(a integer, b integer)'] } });
  });
});

describe('splitJsonArray', () => {
  it('returns the element texts untouched, strings and nesting included', () => {
    expect(splitJsonArray('[]')).toEqual([]);
    expect(splitJsonArray(' [ 9007199254740993 , "a,]\\"[" , {"x":[1,2]}, [3,[4]], null ] ')).toEqual(['9007199254740993', '"a,]\\"["', '{"x":[1,2]}', '[3,[4]]', 'null']);
    expect(splitJsonArray('[""]')).toEqual(['""']);
  });
});

describe('parseRpc', () => {
  it('binds a named body as received and a positional one re-keyed by position, numbers untouched', () => {
    const named = parse('add', '{"a": 1, "b": 9007199254740993}');
    expect(named).toMatchObject({ notation: 'named', values: '{"a": 1, "b": 9007199254740993}' });
    expect(named.args.map((a) => a.key)).toEqual(['a', 'b']);
    const positional = parse('sum_all', '["t", 1.10, 12345678901234567890.5]');
    expect(positional.values).toBe('{"1":"t","2":[1.10,12345678901234567890.5]}');
    expect(parse('double_it', ' 21 ').values).toBe('{"1":21}');
    expect(parse('only_here')).toMatchObject({ args: [], values: '{}' });
  });

  it('reads x-gw-result-format: text (default) or binary, anything else is PARSE_ERROR naming the header', () => {
    expect(parse('only_here').resultFormat).toBe('text');
    expect(parse('only_here', undefined, testConfig(), { 'x-gw-result-format': 'Binary' }).resultFormat).toBe('binary');
    expect(thrown(() => parse('only_here', undefined, testConfig(), { 'x-gw-result-format': 'csv' }))).toMatchObject({ code: 'PARSE_ERROR', details: { header: 'x-gw-result-format' } });
  });

  it('refuses a non-JSON body with 415', () => {
    expect(thrown(() => parseRpc(schema, 'add', { ...request('[1,2]'), headers: { 'content-type': 'text/plain' } }, testConfig()))).toMatchObject({ code: 'UNSUPPORTED_MEDIA_TYPE' });
  });
});

describe('compileRpc', () => {
  it('converts the one bound JSON object with jsonb_to_record and the declared types, quoting every name', () => {
    const q = compileSql(compileRpc(parse('orders_by', '{"p status": "paid"}')));
    expect(q.text).toBe(
      `SELECT coalesce(json_agg(r.*), '[]')::text FROM jsonb_to_record($1::jsonb) AS a("p status" text) CROSS JOIN LATERAL (SELECT * FROM "public"."orders_by"("p status" => a."p status")) AS r`,
    );
    expect(q.values).toEqual(['{"p status": "paid"}']);
  });

  it('passes a variadic tail with VARIADIC, positionally and by name', () => {
    expect(compileSql(compileRpc(parse('sum_all', '["t", 1, 2]'))).text).toContain('"public"."sum_all"(a."1", VARIADIC a."2")');
    expect(compileSql(compileRpc(parse('sum_all', '{"label": "t", "nums": [1]}'))).text).toContain('"public"."sum_all"("label" => a."label", VARIADIC "nums" => a."nums")');
  });

  it('calls a function without arguments without a parameter', () => {
    expect(compileSql(compileRpc(parse('only_here')))).toEqual({ text: 'SELECT to_json("extra"."only_here"())::text', values: [] });
  });

  it('binary results: the function\'s own columns, to_json for types the decoder lacks, then the TimeZone', () => {
    const binary = { 'x-gw-result-format': 'binary' };
    expect(compileSql(compileRpc(parse('orders_by', '{"p status": "paid"}', testConfig(), binary))).text).toBe(
      `SELECT r."id", current_setting('TimeZone') FROM jsonb_to_record($1::jsonb) AS a("p status" text) CROSS JOIN LATERAL (SELECT * FROM "public"."orders_by"("p status" => a."p status")) AS r`,
    );
    expect(compileSql(compileRpc(parse('only_here', undefined, testConfig(), binary))).text).toBe(`SELECT to_json("extra"."only_here"()), current_setting('TimeZone')`);
    expect(compileSql(compileRpc(parse('add', '[1, 2]', testConfig(), binary))).text).toBe(`SELECT "public"."add"(a."1", a."2"), current_setting('TimeZone') FROM jsonb_to_record($1::jsonb) AS a("1" integer, "2" integer)`);
  });

  it('only takes type names shaped like format_type output', () => {
    for (const ok of ['integer', 'numeric[]', 'character varying', 'public."My Type"[]', '"char"', 'timestamp with time zone']) expect(() => catalogType(ok)).not.toThrow();
    for (const bad of ['int); DROP TABLE x; --', 'text[1]', "text'", '"unterminated', '']) expect(() => catalogType(bad)).toThrow(TypeError);
  });
});

describe('allow-list stage (functions)', () => {
  const list = parseFunctionAllowList('# comment\n  public.ADD \n\ngreet\n');
  const stage = createAllowListStage({ functions: list });
  const ctx = (command: unknown) => ({ command }) as unknown as CommandContext;

  it('lets listed functions through (qualified, or bare in any schema; case-insensitive) and refuses others with 403', () => {
    expect(list.allows(addPublic)).toBe(true);
    expect(list.allows(addExtra)).toBe(false);
    expect(list.allows(greet)).toBe(true);
    const command = parse('extra.add', '[1, 2]');
    expect(thrown(() => stage(ctx(command)))).toMatchObject({ code: 'RPC_NOT_ALLOWED' });
    expect(stage(ctx(parse('add', '[1, 2]')))).toMatchObject({ kind: 'rpc' });
  });

  it('narrows the contracts to the listed functions and leaves data commands alone', () => {
    const contracts = stage(ctx({ kind: 'contracts', functions: schema.functions }));
    expect(contracts).toMatchObject({ kind: 'contracts', functions: [addPublic, greet] });
    const list = { kind: 'list' };
    expect(stage(ctx(list))).toBe(list);
  });

  it('refuses a line that is not a function name', () => {
    expect(() => parseFunctionAllowList('public.add\nrm -rf /\n')).toThrow(/line 2/);
    expect(() => parseFunctionAllowList('a.b.c\n')).toThrow(/line 1/);
  });
});
