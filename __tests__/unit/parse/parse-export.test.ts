/**
 * Exports at parse (docs/querying.md, "Exports"): which format `Accept` asks for, when a list
 * becomes an export, its row cap, the refusals, and the export's own query pattern.
 */
import { randomBytes } from 'node:crypto';
import type { ResolvedConfig } from '../../../lib/pipeline/resolved-config';
import { isGatewayError } from '../../../lib/errors/gateway-error';
import { createCursorCodec } from '../../../lib/pipeline/cursor-codec';
import { queryPattern } from '../../../lib/doors/shared/query-pattern';
import { preferredFormat } from '../../../lib/doors/rest/parse/parse-accept';
import { parseList } from '../../../lib/doors/rest/parse/parse-list';
import { orders } from '../relations/relations-fixture';

const on = { defaultLimit: 100, maxLimit: 1000, maxExportRows: 50000 } as ResolvedConfig;
const off = { ...on, maxExportRows: 0 } as ResolvedConfig;
const cursors = createCursorCodec(randomBytes(32));
const params = (query: string) => [...new URLSearchParams(query)];

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    return isGatewayError(err) ? err.code : 'not a GatewayError';
  }
  return undefined;
}

describe('preferredFormat(Accept)', () => {
  it.each([
    [undefined, 'json'],
    ['application/json', 'json'],
    ['*/*', 'json'],
    ['text/html', 'json'],
    ['application/x-ndjson', 'ndjson'],
    ['TEXT/CSV; charset=utf-8', 'csv'],
    ['text/csv, application/json', 'csv'],
    ['application/json;q=0.5, text/csv', 'csv'],
    ['text/csv;q=0.2, application/x-ndjson;q=0.9', 'ndjson'],
    ['text/csv;q=0, application/json;q=0.1', 'json'],
    ['text/html, */*;q=0.8', 'json'],
  ] as const)('%s -> %s', (accept, format) => {
    expect(preferredFormat(accept)).toBe(format);
  });
});

describe('parseList with an export format', () => {
  it('makes NDJSON and CSV exports capped by limit, else by max_export_rows', () => {
    const csv = parseList(orders, params('select=id'), on, cursors, null, 'csv');
    expect([csv.export, csv.root.limit]).toEqual(['csv', 50000]);
    const ndjson = parseList(orders, params('limit=7'), on, cursors, null, 'ndjson');
    expect([ndjson.export, ndjson.root.limit]).toEqual(['ndjson', 7]);
  });

  it('streams JSON only above max_limit and only while exports are on; otherwise clamps as before', () => {
    expect(parseList(orders, params('limit=1000'), on, cursors).export).toBeUndefined();
    const big = parseList(orders, params('limit=1001'), on, cursors);
    expect([big.export, big.root.limit]).toEqual(['json', 1001]);
    const clamped = parseList(orders, params('limit=5000'), off, cursors);
    expect([clamped.export, clamped.root.limit]).toEqual([undefined, 1000]);
  });

  it('refuses more rows than max_export_rows, count=exact on an export, and NDJSON/CSV while exports are off', () => {
    expect(codeOf(() => parseList(orders, params('limit=50001'), on, cursors, null, 'ndjson'))).toBe('PARSE_ERROR');
    expect(codeOf(() => parseList(orders, params('limit=50001'), on, cursors))).toBe('PARSE_ERROR');
    expect(codeOf(() => parseList(orders, params('count=exact'), on, cursors, null, 'csv'))).toBe('PARSE_ERROR');
    expect(codeOf(() => parseList(orders, [], off, cursors, null, 'csv'))).toBe('NOT_ACCEPTABLE');
    expect(codeOf(() => parseList(orders, [], off, cursors, null, 'ndjson'))).toBe('NOT_ACCEPTABLE');
  });

  it('gives an export its own query pattern', () => {
    expect(queryPattern(parseList(orders, params('select=id&limit=5'), on, cursors))).toBe('GET orders select=id limit');
    expect(queryPattern(parseList(orders, params('select=id&limit=5'), on, cursors, null, 'csv'))).toBe('GET orders select=id limit export=csv');
    expect(queryPattern(parseList(orders, params('select=id&limit=5000'), on, cursors))).toBe('GET orders select=id limit export=json');
  });
});
