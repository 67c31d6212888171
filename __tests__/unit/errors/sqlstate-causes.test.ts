/**
 * SQLSTATE rows with several causes: a code or hint that names a cause is given only when the
 * request's kind, its relation, the function context and PostgreSQL's report make that cause
 * certain (docs/errors.md, "SQLSTATE mapping"). The errors are shaped as node-postgres reports
 * them, with the fields PostgreSQL 18 sends (checked against a real server in
 * __tests__/integration/database-states.test.ts).
 */
import { type ErrorContext, functionOf, toGatewayError } from '../../../lib/db/to-gateway-error';
import { GatewayError } from '../../../lib/errors/gateway-error';
import { functionStatus } from '../../../lib/errors/function-status';

const pgError = (code: string, message: string, extra: Record<string, unknown> = {}) => Object.assign(new Error(message), { code, ...extra });

const table = { schema: 'app', name: 'items', kind: 'r' } as const;
const list: ErrorContext = { kind: 'list', relation: table };
const get: ErrorContext = { kind: 'get', relation: table };
const aggregate: ErrorContext = { kind: 'aggregate', relation: table };
const insert: ErrorContext = { kind: 'insert', relation: table, onConflict: false };
const upsert: ErrorContext = { kind: 'insert', relation: table, onConflict: true };
const call: ErrorContext = { kind: 'rpc' };
const inFunction = { where: 'PL/pgSQL function app.pay(integer) line 3 at RAISE' };

const unpopulated = pgError('55000', 'materialized view "item_totals" has not been populated', { hint: 'Use the REFRESH MATERIALIZED VIEW command.', routine: 'ExecOpenScanRelation' });
const viewNotWritable = pgError('55000', 'cannot insert into view "totals"', { routine: 'error_view_not_updatable', hint: 'To enable inserting into the view, provide an INSTEAD OF INSERT trigger.' });
const upsertTwice = pgError('21000', 'ON CONFLICT DO UPDATE command cannot affect row a second time', { routine: 'ExecOnConflictUpdate' });
const subqueryRows = pgError('21000', 'more than one row returned by a subquery used as an expression', { routine: 'ExecSetParamPlan' });

describe('55000: an unpopulated materialized view is never 405', () => {
  it.each([
    ['a list', list],
    ['a row', get],
    ['an aggregate', aggregate],
    ['a call', call],
    ['a write (e.g. a trigger reading it)', insert],
    ['no context', undefined],
  ])('%s -> 503 SERVICE_UNAVAILABLE with the REFRESH hint', (_what, context) => {
    const e = toGatewayError(unpopulated, context)!;
    expect([e.status, e.code, e.message]).toEqual([503, 'SERVICE_UNAVAILABLE', 'Materialized view "item_totals" has not been populated.']);
    expect(e.hint).toBe('Run `REFRESH MATERIALIZED VIEW item_totals`; PostgreSQL refuses to read it until then.');
    expect(e.headers).toEqual({});
  });

  it('qualifies the name when it is the relation the request reads, quoting where needed', () => {
    const e = toGatewayError(pgError('55000', 'materialized view "Item Totals" has not been populated', { routine: 'ExecOpenScanRelation' }), { kind: 'list', relation: { schema: 'dbstates', name: 'Item Totals', kind: 'm' } })!;
    expect(e.hint).toBe('Run `REFRESH MATERIALIZED VIEW dbstates."Item Totals"`; PostgreSQL refuses to read it until then.');
  });

  it('recognises the cause by its routine whatever the language of the message', () => {
    const e = toGatewayError(pgError('55000', 'la vue matérialisée « mv » n\'a pas été remplie', { routine: 'ExecOpenScanRelation' }), list)!;
    expect([e.code, e.hint]).toEqual(['SERVICE_UNAVAILABLE', 'Run `REFRESH MATERIALIZED VIEW <name>`; PostgreSQL refuses to read it until then.']);
  });

  it('a write to a view PostgreSQL cannot update stays 405 with the base-table hint', () => {
    const e = toGatewayError(viewNotWritable, { kind: 'insert', relation: { schema: 'app', name: 'totals', kind: 'v' }, onConflict: false })!;
    expect([e.status, e.code, e.hint]).toEqual([405, 'METHOD_NOT_ALLOWED', 'This relation is not writable; write to its base table.']);
  });

  it('any other 55000 is no 405 and names no view: unmapped on a read or a write to a table, FUNCTION_FAILED in a function', () => {
    const currval = pgError('55000', 'currval of sequence "s" is not yet defined in this session', { routine: 'currval_oid' });
    expect(toGatewayError(currval, list)).toBeUndefined();
    expect(toGatewayError(currval, insert)).toBeUndefined();
    expect(toGatewayError(viewNotWritable, list)).toBeUndefined();
    const inside = toGatewayError(pgError('55000', 'currval of sequence "s" is not yet defined in this session', inFunction), call)!;
    expect([inside.code, inside.status, inside.hint]).toEqual(['FUNCTION_FAILED', 500, undefined]);
  });
});

describe('42809: 405 only for a write', () => {
  const matviewWrite = pgError('42809', 'cannot change materialized view "item_totals"', { routine: 'CheckValidResultRel' });
  it('a write to a materialized view is 405', () => {
    expect(toGatewayError(matviewWrite, { kind: 'insert', relation: { schema: 'app', name: 'item_totals', kind: 'm' }, onConflict: false })?.status).toBe(405);
  });
  it('a read or a call never is', () => {
    expect(toGatewayError(matviewWrite, list)).toBeUndefined();
    expect(toGatewayError(matviewWrite, call)).toBeUndefined();
    expect(toGatewayError(matviewWrite, undefined)).toBeUndefined();
    expect(toGatewayError(pgError('42809', 'op ANY/ALL (array) requires array on right side', inFunction), call)?.code).toBe('FUNCTION_FAILED');
  });
});

describe('21000: the upsert hint only for an upsert', () => {
  it('an upsert naming one key twice keeps CONFLICT and the hint', () => {
    const e = toGatewayError(upsertTwice, upsert)!;
    expect([e.status, e.code, e.hint]).toEqual([409, 'CONFLICT', 'Send each conflict key at most once per batch.']);
  });
  it.each([
    ['a read of a view', subqueryRows, list],
    ['a plain insert', subqueryRows, insert],
    ['a call', subqueryRows, call],
    ['an upsert whose trigger fails', pgError('21000', 'more than one row returned by a subquery used as an expression', inFunction), upsert],
    ['no context', upsertTwice, undefined],
  ])('%s gets no upsert hint', (_what, err, context) => {
    const e = toGatewayError(err, context)!;
    expect([e.code, e.hint]).toEqual(['CONFLICT', undefined]);
  });
});

describe('other hints only where their cause is certain', () => {
  it('42883: the json hint only when PostgreSQL names the type json, and never in a function body', () => {
    const json = toGatewayError(pgError('42883', 'could not identify an ordering operator for type json'), list)!;
    expect([json.code, json.hint]).toEqual(['PARSE_ERROR', 'json columns cannot be sorted, compared or made distinct; jsonb can.']);
    expect(toGatewayError(pgError('42883', 'operator does not exist: json = unknown'), list)?.hint).toBeDefined();
    const jsonb = toGatewayError(pgError('42883', 'operator does not exist: jsonb ~~ unknown'), list)!;
    expect([jsonb.code, jsonb.hint]).toEqual(['PARSE_ERROR', undefined]);
    const inside = toGatewayError(pgError('42883', 'function nofn(json) does not exist', { ...inFunction, hint: 'No function matches the given name and argument types.' }), call)!;
    expect([inside.code, inside.message, inside.hint]).toEqual(['FUNCTION_FAILED', 'Function nofn(json) does not exist.', undefined]);
  });

  it('42P01 and 42703: the schema-changed hint for the request, FUNCTION_FAILED without it in a function body', () => {
    expect(toGatewayError(pgError('42P01', 'relation "items" does not exist'), list)).toMatchObject({ code: 'NOT_FOUND', hint: expect.stringMatching(/schema changed/) });
    expect(toGatewayError(pgError('42703', 'column "qty" does not exist'), list)).toMatchObject({ code: 'UNKNOWN_COLUMN', hint: expect.stringMatching(/schema changed/) });
    for (const code of ['42P01', '42703']) {
      const e = toGatewayError(pgError(code, 'relation "nope" does not exist', inFunction), call)!;
      expect([e.code, e.status, e.message, e.hint]).toEqual(['FUNCTION_FAILED', 500, 'Relation "nope" does not exist.', undefined]);
    }
  });

  it('42P10: the conflict-columns message only for an upsert', () => {
    expect(toGatewayError(pgError('42P10', 'there is no unique or exclusion constraint matching the ON CONFLICT specification'), upsert)).toMatchObject({ code: 'PARSE_ERROR', hint: expect.stringMatching(/schema changed/) });
    expect(toGatewayError(pgError('42P10', 'for SELECT DISTINCT, ORDER BY expressions must appear in select list'), list)).toBeUndefined();
  });

  it('0A000: the VOLATILE hint only for a non-volatile function that writes', () => {
    const write = toGatewayError(pgError('0A000', 'INSERT is not allowed in a non-volatile function', { where: 'SQL function "sneaky" statement 1' }), call)!;
    expect([write.code, write.hint]).toEqual(['FORBIDDEN', 'A function that writes must be declared VOLATILE.']);
    const viewColumn = toGatewayError(pgError('0A000', 'cannot insert into column "total" of view "totals"'), insert)!;
    expect([viewColumn.code, viewColumn.hint]).toEqual(['FORBIDDEN', undefined]);
    const other = toGatewayError(pgError('0A000', 'cannot COPY to/from client in PL/pgSQL', inFunction), call)!;
    expect([other.code, other.hint]).toEqual(['FUNCTION_FAILED', undefined]);
  });

  it('the rest of class 42: FUNCTION_FAILED inside a function body, unmapped outside one', () => {
    const ambiguous = toGatewayError(pgError('42702', 'column reference "id" is ambiguous', inFunction), call)!;
    expect([ambiguous.code, ambiguous.message]).toEqual(['FUNCTION_FAILED', 'Column reference "id" is ambiguous.']);
    expect(toGatewayError(pgError('42601', 'syntax error at or near "SELEC"'), list)).toBeUndefined();
    expect(toGatewayError(pgError('42501', 'permission denied for table items', inFunction), call)?.code).toBe('FORBIDDEN');
  });

  it('57014: the narrow-the-query hint only for a list or an aggregate', () => {
    const timeout = pgError('57014', 'canceling statement due to statement timeout');
    expect(toGatewayError(timeout, list)?.hint).toBe('Narrow the query with filters or a smaller limit.');
    expect(toGatewayError(timeout, aggregate)?.hint).toBe('Narrow the query with filters or a smaller limit.');
    for (const context of [get, insert, call, undefined]) expect(toGatewayError(timeout, context)).toMatchObject({ code: 'TIMEOUT', hint: undefined });
  });
});

describe('errors raised inside a function body are told apart from the request', () => {
  it('a bad literal of the request has no source; the same SQLSTATE from a function body names it', () => {
    const literal = toGatewayError(pgError('22P02', 'invalid input syntax for type integer: "x"'), call)!;
    expect(literal.details).toEqual({ sqlstate: '22P02' });
    const inside = toGatewayError(pgError('22012', 'division by zero', { where: 'PL/pgSQL expression "1/0"\nPL/pgSQL function app.divide(integer) line 1 at RETURN' }), call)!;
    expect([inside.code, inside.status]).toEqual(['VALIDATION_ERROR', 400]);
    expect(inside.details).toEqual({ sqlstate: '22012', source: 'function', function: 'app.divide' });
    expect(JSON.stringify(inside.toJSON())).not.toContain('1/0');
  });

  it('a JSON context line is not a function', () => {
    expect(toGatewayError(pgError('22P02', 'invalid input syntax for type json', { where: 'JSON data, line 1: {bad' }), insert)?.details).toEqual({ sqlstate: '22P02' });
  });

  it.each([
    ['PL/pgSQL function pay(integer) line 3 at RAISE', 'pay'],
    ['PL/pgSQL function api.pay(integer,text) line 3 at RAISE', 'api.pay'],
    ['PL/pgSQL function "Shout It"(text) line 1 at RETURN', '"Shout It"'],
    ['PL/pgSQL function dbstates."odd(name"() line 1 at RAISE', 'dbstates."odd(name"'],
    ['SQL statement "INSERT INTO t VALUES (1)"\nPL/pgSQL function trg() line 2 at SQL statement', 'trg'],
    ['SQL function "pay" statement 1', 'pay'],
    ['SQL function "pay" during inlining', 'pay'],
    ['PL/Python function "pay"', 'pay'],
    ['JSON data, line 1: {bad', undefined],
    ['', undefined],
    [undefined, undefined],
  ])('functionOf(%j) = %j', (where, name) => {
    expect(functionOf(where)).toBe(name);
  });
});

describe('class P0 and PTxyz', () => {
  it('P0001 stays VALIDATION_ERROR with the message, DETAIL and HINT of the RAISE', () => {
    const e = toGatewayError(pgError('P0001', 'no such plan', { ...inFunction, detail: 'plan: gold', hint: 'Pick silver.' }), call)!;
    expect(e.toJSON()).toEqual({ code: 'VALIDATION_ERROR', message: 'No such plan.', details: { sqlstate: 'P0001', source: 'function', function: 'app.pay', detail: 'plan: gold' }, hint: 'Pick silver.' });
  });

  it.each([
    ['P0002', 'query returned no rows'],
    ['P0003', 'query returned more than one row'],
    ['P0004', 'the total must be positive'],
    ['P0000', 'PL/pgSQL failed'],
  ])('%s is FUNCTION_FAILED 500 with the message, not INTERNAL_ERROR', (sqlstate, message) => {
    const e = toGatewayError(pgError(sqlstate, message, inFunction), call)!;
    expect([e.code, e.status, e.message]).toEqual(['FUNCTION_FAILED', 500, `${message.charAt(0).toUpperCase()}${message.slice(1)}.`]);
    expect(e.details).toEqual({ sqlstate, source: 'function', function: 'app.pay' });
  });

  it.each([
    ['PT402', 402],
    ['PT404', 404],
    ['PT418', 418],
    ['PT401', 401],
    ['PT503', 503],
    ['PT511', 511],
  ])('%s answers HTTP %i as FUNCTION_STATUS with the message, DETAIL and HINT', (sqlstate, status) => {
    const e = toGatewayError(pgError(sqlstate, 'pay up', { ...inFunction, detail: 'plan: pro', hint: 'Upgrade.' }), call)!;
    expect(e.status).toBe(status);
    expect(e.toJSON()).toEqual({ code: 'FUNCTION_STATUS', message: 'Pay up.', details: { sqlstate, source: 'function', function: 'app.pay', detail: 'plan: pro' }, hint: 'Upgrade.' });
  });

  it.each(['PT999', 'PT200', 'PT302', 'PT399', 'PT420', 'PT600', 'PTABC', 'PT4AB'])('%s is no HTTP error status: FUNCTION_FAILED 500', (sqlstate) => {
    expect(functionStatus(sqlstate)).toBeUndefined();
    const e = toGatewayError(pgError(sqlstate, 'pay up', inFunction), call);
    expect([e?.code, e?.status, e?.message]).toEqual(['FUNCTION_FAILED', 500, 'Pay up.']);
  });

  it('only FUNCTION_STATUS takes a status, and only a 4xx/5xx one', () => {
    expect(new GatewayError('FUNCTION_STATUS', 'x', { status: 418 }).status).toBe(418);
    expect(() => new GatewayError('FUNCTION_STATUS', 'x')).toThrow(/needs a 4xx or 5xx status/);
    expect(() => new GatewayError('FUNCTION_STATUS', 'x', { status: 200 })).toThrow(/needs a 4xx or 5xx status/);
    expect(() => new GatewayError('NOT_FOUND', 'x', { status: 410 })).toThrow(/always has status 404/);
    expect(new GatewayError('NOT_FOUND', 'x', { status: 404 }).status).toBe(404);
  });
});
