/**
 * The caps of docs/querying.md "Limits", at their value (accepted) and one over (400 PARSE_ERROR
 * with `details: { limit, max, given }`), checked in parse without a database; and the SQLSTATE
 * backstops for PostgreSQL's own limits.
 */
import { callerOrder, embedsOf, selectedColumns } from '../../../lib/command/read-items';
import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { ResolvedConfig } from '../../../lib/pipeline/resolved-config';
import { toGatewayError } from '../../../lib/db/to-gateway-error';
import { GatewayError } from '../../../lib/errors/gateway-error';
import { digestRequest, MAX_QUERY_PARAMETERS } from '../../../lib/http/digest-request';
import { createCursorCodec } from '../../../lib/pipeline/cursor-codec';
import { parseAggregate } from '../../../lib/doors/rest/parse/parse-aggregate';
import { parseList } from '../../../lib/doors/rest/parse/parse-list';
import { parseOnConflict } from '../../../lib/doors/shared/parse-on-conflict';
import { parseReturning } from '../../../lib/doors/rest/parse/parse-returning';
import { requestLimits } from '../../../lib/doors/shared/request-limits';
import { orders, orderTags } from '../support/schema-fixture';
import { thrown } from '../support/thrown';

const config = { defaultLimit: 100, maxLimit: 1000 } as ResolvedConfig;
const cursors = createCursorCodec(randomBytes(32));
const params = (query: string) => [...new URLSearchParams(query)];
const list = (query: string, table = orders) => parseList(table, params(query), config, cursors);
const repeat = (item: string, n: number, separator = ','): string => Array.from({ length: n }, () => item).join(separator);

function expectCap(fn: () => unknown, limit: string, max: number, given: number): void {
  const e = thrown(fn, GatewayError);
  expect(e.code).toBe('PARSE_ERROR');
  expect(e.status).toBe(400);
  expect(e.details).toEqual({ limit, max, given });
  expect(e.message).toContain(`at most ${max}`);
}

describe('request limits', () => {
  it('stay far below the PostgreSQL limits they guard', () => {
    // json_build_array of the ordering keys: sort keys + a primary key of at most 32 columns < 100 arguments.
    expect(requestLimits.sortKeys + 32).toBeLessThan(100);
    expect(requestLimits.columnNames).toBeLessThanOrEqual(1600);
  });

  it('cap filter parameters, counted before any is parsed', () => {
    expect(list(repeat('total=gte.1', 100, '&')).root.where).toHaveLength(100);
    expectCap(() => list(repeat('total=gte.1', 101, '&')), 'filters', 100, 101);
    // Reserved names are not filters; unknown names count (they would fail anyway, later).
    expect(list(`limit=1&select=id&${repeat('status=paid', 100, '&')}`).root.where).toHaveLength(100);
    expectCap(() => list(repeat('nope=1', 101, '&')), 'filters', 100, 101);
    expectCap(() => parseAggregate(orders, params(`fn=count&${repeat('total=gte.1', 101, '&')}`)), 'filters', 100, 101);
    expect(parseAggregate(orders, params(`fn=sum&column=total&search=x&${repeat('total=gte.1', 100, '&')}`)).root.where).toHaveLength(100);
  });

  it('cap sort entries at 32', () => {
    const sorted = list(`sort=${repeat('-total', 32)}`);
    expect(callerOrder(sorted.root, sorted.tieBreakers)).toHaveLength(32);
    expectCap(() => list(`sort=${repeat('id', 33)}`), 'sort_keys', 32, 33);
    expectCap(() => list(`sort=${repeat('id', 101)}`), 'sort_keys', 32, 101);
  });

  it('cap in lists at 1,000 items, in both spellings', () => {
    const items = (n: number) => Array.from({ length: n }, (_, i) => i).join(',');
    expect(list(`id=in.(${items(1000)})`).root.where[0]).toMatchObject({ kind: 'in' });
    expectCap(() => list(`id=in.(${items(1001)})`), 'in_items', 1000, 1001);
    expectCap(() => list(`id.in=${items(1001)}`), 'in_items', 1000, 1001);
  });

  it('cap search at 1,000 characters and 100 words', () => {
    expect(list(`search=${'x'.repeat(1000)}`).search?.query).toHaveLength(1000);
    expectCap(() => list(`search=${'x'.repeat(1001)}`), 'search_characters', 1000, 1001);
    expect(list(`search=${repeat('a', 100, '+')}`).search).toBeDefined();
    expectCap(() => list(`search=${repeat('a', 101, '+')}`), 'search_terms', 100, 101);
    expectCap(() => parseAggregate(orders, params(`fn=count&search=${'x'.repeat(1001)}`)), 'search_characters', 1000, 1001);
  });

  it('cap the names of select, search_columns, returning and X-On-Conflict at 1,600', () => {
    expectCap(() => list(`select=${repeat('id', 1601)}`), 'column_names', 1600, 1601);
    expectCap(() => list(`search=x&search_columns=${repeat('notes', 1601)}`), 'column_names', 1600, 1601);
    expectCap(() => parseReturning(orders, params(`returning=${repeat('id', 1601)}`)), 'column_names', 1600, 1601);
    expectCap(() => parseOnConflict(orderTags, { 'x-upsert': 'true', 'x-on-conflict': repeat('tag', 1601) }, new Map()), 'column_names', 1600, 1601);
  });

  it('cap the mentions of one column in select and search_columns at 4 (it is selected once)', () => {
    expect(selectedColumns(list(`select=${repeat('id', 4)}`).root)).toEqual([orders.columnsByName.get('id')]);
    expectCap(() => list(`select=${repeat('id', 5)}`), 'column_repeats', 4, 5);
    expectCap(() => list(`select=status,${repeat('id', 1599)}`), 'column_repeats', 4, 5);
    expectCap(() => list(`search=x&search_columns=${repeat('notes', 5)}`), 'column_repeats', 4, 5);
  });

  it('name search_columns, not select, in its own errors', () => {
    const e = thrown(() => list('search=x&search_columns=nope'), GatewayError);
    expect(e.code).toBe('UNKNOWN_COLUMN');
    expect(e.message).toBe('Table `orders` has no column `nope` (in `search_columns`).');
  });
});

describe('query parameter count (digestRequest)', () => {
  const req = (url: string) => ({ url, method: 'GET', headers: {}, socket: { remoteAddress: '127.0.0.1' } }) as unknown as IncomingMessage;

  it(`accepts ${MAX_QUERY_PARAMETERS} parameters and refuses one more before decoding any`, () => {
    expect(digestRequest(req(`/orders?${repeat('a=1', MAX_QUERY_PARAMETERS, '&')}`), 'id').query).toHaveLength(MAX_QUERY_PARAMETERS);
    // Empty parts (`&&`) are not parameters, as for URLSearchParams.
    expect(digestRequest(req(`/orders?${repeat('a=1', MAX_QUERY_PARAMETERS, '&&')}&`), 'id').query).toHaveLength(MAX_QUERY_PARAMETERS);
    const e = thrown(() => digestRequest(req(`/orders?${repeat('a=%zz', 25000, '&')}`), 'id'), GatewayError);
    expect(e.code).toBe('PARSE_ERROR');
    expect(e.details).toEqual({ limit: 'query_parameters', max: MAX_QUERY_PARAMETERS });
  });
});

describe('SQLSTATE backstops for PostgreSQL limits', () => {
  const pgError = (code: string, message: string) => Object.assign(new Error(message), { code });

  it('maps 54001 (stack depth) to PARSE_ERROR with a fixed message', () => {
    const e = toGatewayError(pgError('54001', 'stack depth limit exceeded'))!;
    expect([e.code, e.status, e.message]).toEqual(['PARSE_ERROR', 400, 'The request is too complex for the database (stack depth limit exceeded).']);
  });

  it.each([
    ['54000', 'number of array dimensions (7) exceeds the maximum allowed (6)'],
    ['54023', 'cannot pass more than 100 arguments to a function'],
    ['54011', 'target lists can have at most 1664 entries'],
    ['2202E', 'wrong number of array subscripts'],
  ])('maps %s to VALIDATION_ERROR with its message', (sqlstate, message) => {
    const e = toGatewayError(pgError(sqlstate, message))!;
    expect([e.code, e.status, e.message]).toEqual(['VALIDATION_ERROR', 400, `${message.charAt(0).toUpperCase()}${message.slice(1)}.`]);
    expect(e.details).toEqual({ sqlstate });
  });
});
