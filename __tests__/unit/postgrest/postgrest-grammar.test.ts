/**
 * The PostgREST dialect's grammar and error bodies without a database (docs/postgrest-dialect.md):
 * select, filters and logic trees, Accept and Range, and how errors become PostgREST's bodies.
 */
import { GatewayError } from '../../../lib/errors/gateway-error';
import { PostgrestError } from '../../../lib/doors/postgrest/postgrest-error';
import { postgrestErrorBody, sqlstateStatus } from '../../../lib/doors/postgrest/respond/postgrest-error-body';
import { parseColumnFilter, parseLogicTree } from '../../../lib/doors/postgrest/parse/parse-condition';
import { parseSelect } from '../../../lib/doors/postgrest/parse/parse-select';
import { parseAccept, parseRange, selectSchema } from '../../../lib/doors/postgrest/parse/postgrest-headers';
import type { FieldRef } from '../../../lib/command/command';
import type { GatewayRequest } from '../../../lib/pipeline/gateway-request';

const code = (f: () => unknown): string | undefined => {
  try {
    f();
  } catch (e) {
    return e instanceof PostgrestError ? e.pgrstCode : String(e);
  }
  return undefined;
};

describe('select grammar', () => {
  it('fields, aliases, JSON paths, casts, aggregates, count(), embeds with hints and spreads', () => {
    expect(parseSelect('a:data->x->>"y z"::text, n.sum()::int, c:count(), ...rel!fk!inner(*, x), *')).toEqual([
      { kind: 'field', alias: 'a', name: 'data', path: [{ key: 'x', asText: false }, { key: 'y z', asText: true }], cast: 'text', aggregate: null, resultCast: null },
      { kind: 'field', alias: null, name: 'n', path: [], cast: null, aggregate: 'sum', resultCast: 'int' },
      { kind: 'count', alias: 'c', resultCast: null },
      { kind: 'embed', alias: null, name: 'rel', hints: ['fk', 'inner'], spread: true, items: [{ kind: 'star' }, { kind: 'field', alias: null, name: 'x', path: [], cast: null, aggregate: null, resultCast: null }] },
      { kind: 'star' },
    ]);
  });

  it('refuses malformed text with PGRST100, and nesting past the cap', () => {
    for (const bad of ['a(', 'a)', '...a', 'a!b', 'a::', 'a.sum', '"a', 'a->', ',']) expect(code(() => parseSelect(bad))).toBe('PGRST100');
    expect(code(() => parseSelect('a('.repeat(20) + ')'.repeat(20)))).toBe('PGRST100');
  });
});

describe('filter grammar', () => {
  const field = { column: { name: 'c' }, path: [] } as unknown as FieldRef;
  it('operators, not., modifiers, lists with quotes, like wildcards', () => {
    expect(parseColumnFilter(field, 'not.eq.5')).toEqual({ kind: 'compare', field, op: 'eq', value: '5', negate: true });
    expect(parseColumnFilter(field, 'like.*a*')).toMatchObject({ op: 'like', value: '%a%' });
    expect(parseColumnFilter(field, 'in.(1,"a,b",  c )')).toMatchObject({ kind: 'in', values: ['1', 'a,b', 'c'] });
    expect(parseColumnFilter(field, 'gt(any).{1,2}')).toMatchObject({ kind: 'quantified', op: 'gt', quantifier: 'any', values: ['1', '2'] });
    expect(parseColumnFilter(field, 'fts(english).a & b')).toMatchObject({ kind: 'fts', op: 'fts', config: 'english', query: 'a & b' });
    expect(parseColumnFilter(field, 'is.NULL')).toMatchObject({ kind: 'is', value: 'null' });
    expect(parseColumnFilter(field, 'eq.a.b.c')).toMatchObject({ value: 'a.b.c' });
  });

  it('refuses unknown operators, bad modifiers and configurations', () => {
    for (const bad of ['xx.1', 'eq', 'in.1,2', 'is.maybe', 'cs(any).{1}', 'eq(some).{1}', 'fts(a;b).x', 'in.("a)']) expect(code(() => parseColumnFilter(field, bad))).toBe('PGRST100');
  });

  it('logic trees nest and negate; depth is capped', () => {
    const resolve = (t: string) => ({ column: { name: t }, path: [] }) as unknown as FieldRef;
    const tree = parseLogicTree('or', false, '(a.eq.1,not.and(b.gt.2,c.in.(1,2)))', resolve);
    expect(tree).toMatchObject({ kind: 'group', op: 'or', items: [{ kind: 'compare' }, { kind: 'group', op: 'and', negate: true, items: [{ op: 'gt' }, { kind: 'in' }] }] });
    expect(code(() => parseLogicTree('or', false, '(' + 'or('.repeat(12) + 'a.eq.1' + ')'.repeat(13), resolve))).toBe('PGRST100');
    expect(code(() => parseLogicTree('or', false, 'a.eq.1', resolve))).toBe('PGRST100');
  });
});

describe('headers', () => {
  const req = (headers: Record<string, string>, method = 'GET') => ({ method, headers }) as unknown as GatewayRequest;
  it('Accept: the first served media type; plan options; 406 otherwise', () => {
    expect(parseAccept('text/html, text/csv')).toEqual({ media: 'csv', plan: null, stripNulls: false });
    expect(parseAccept('application/vnd.pgrst.plan+json; for="application/json"; options=analyze|buffers;')).toMatchObject({ media: 'plan', plan: { analyze: true, buffers: true, verbose: false, format: 'json' } });
    expect(parseAccept(undefined).media).toBe('json');
    expect(code(() => parseAccept('application/xml'))).toBe('PGRST107');
    expect(code(() => parseAccept('application/vnd.pgrst.plan; options=drop'))).toBe('PGRST107');
  });

  it('Range and profiles', () => {
    expect(parseRange(req({ range: '2-5' }))).toEqual({ offset: 2, limit: 4 });
    expect(parseRange(req({ range: '2-' }))).toEqual({ offset: 2, limit: null });
    expect(code(() => parseRange(req({ range: '5-2' })))).toBe('PGRST103');
    expect(selectSchema(req({}), ['a', 'b'])).toBe('a');
    expect(selectSchema(req({ 'accept-profile': 'b' }), ['a', 'b'])).toBe('b');
    expect(selectSchema(req({ 'content-profile': 'b', 'accept-profile': 'x' }, 'POST'), ['a', 'b'])).toBe('b');
    expect(code(() => selectSchema(req({ 'accept-profile': 'c' }), ['a', 'b']))).toBe('PGRST106');
  });
});

describe('error bodies', () => {
  it('PGRST errors keep their code and status; database errors their SQLSTATE with PostgREST\'s status', () => {
    expect(postgrestErrorBody(new PostgrestError('PGRST116', 'm', { details: 'd' }), false)).toEqual({ status: 406, body: { code: 'PGRST116', message: 'm', details: 'd', hint: null } });
    expect(postgrestErrorBody(new GatewayError('CONFLICT', 'dup', { details: { sqlstate: '23505', detail: 'Key (id)=(1) exists.' } }), false)).toEqual({ status: 409, body: { code: '23505', message: 'dup', details: 'Key (id)=(1) exists.', hint: null } });
    expect(postgrestErrorBody(new GatewayError('FORBIDDEN', 'no', { details: { sqlstate: '42501' } }), true).status).toBe(401);
    expect(postgrestErrorBody(new GatewayError('FORBIDDEN', 'no', { details: { table: 't' } }), false)).toEqual({ status: 403, body: { code: '42501', message: 'no', details: '{"table":"t"}', hint: null } });
    expect([sqlstateStatus('PT418', false), sqlstateStatus('P0001', false), sqlstateStatus('08006', false), sqlstateStatus('22P02', false)]).toEqual([418, 400, 503, 400]);
  });

  it("in postgrest_version 12's words where they differ; an expired token told apart in both", () => {
    const several = new PostgrestError('PGRST116', 'Cannot coerce the result to a single JSON object', { details: 'The result contains 2 rows' });
    expect(postgrestErrorBody(several, false, 13).body).toMatchObject({ message: 'Cannot coerce the result to a single JSON object' });
    expect(postgrestErrorBody(several, false, 12).body).toMatchObject({ message: 'JSON object requested, multiple (or no) rows returned', details: 'The result contains 2 rows' });
    const schema = (): unknown => selectSchema({ method: 'GET', headers: { 'accept-profile': 'c' } } as unknown as GatewayRequest, ['a', 'b']);
    let thrown: unknown;
    try {
      schema();
    } catch (err) {
      thrown = err;
    }
    expect(postgrestErrorBody(thrown as PostgrestError, false, 13).body).toEqual({ code: 'PGRST106', message: 'Invalid schema: c', details: null, hint: 'Only the following schemas are exposed: a, b' });
    expect(postgrestErrorBody(thrown as PostgrestError, false, 12).body).toEqual({ code: 'PGRST106', message: 'The schema must be one of the following: a, b', details: null, hint: null });
    const notRoute = new PostgrestError('PGRST125', 'Invalid path specified in request URL');
    expect(postgrestErrorBody(notRoute, false, 12)).toEqual({ status: 404, body: {} });
    const expired = new GatewayError('UNAUTHORIZED', 'The bearer token is invalid or expired.', { reason: 'expired' });
    expect(postgrestErrorBody(expired, false, 13)).toMatchObject({ status: 401, body: { code: 'PGRST303', message: 'JWT expired' } });
    expect(postgrestErrorBody(expired, false, 12)).toMatchObject({ status: 401, body: { code: 'PGRST301', message: 'JWT expired' } });
    const forged = new GatewayError('UNAUTHORIZED', 'The bearer token is invalid or expired.', { reason: 'bad_signature' });
    expect(postgrestErrorBody(forged, false, 13)).toEqual({ status: 401, body: { code: 'PGRST301', message: 'The bearer token is invalid or expired.', details: null, hint: null } });
  });
});
