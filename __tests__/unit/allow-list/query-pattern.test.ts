/** Query patterns and the query allow-list stage without a database. */
import { randomBytes } from 'node:crypto';
import type { ResolvedConfig } from '../../../lib/pipeline/resolved-config';
import { GatewayConfigError } from '../../../lib/errors/gateway-config-error';
import { GatewayError } from '../../../lib/errors/gateway-error';
import type { GatewayRequest } from '../../../lib/pipeline/gateway-request';
import { createAllowListStage } from '../../../lib/stages/allow-list/create-allow-list-stage';
import { parseQueryAllowList } from '../../../lib/stages/allow-list/query-allow-list';
import { queryPattern } from '../../../lib/doors/shared/query-pattern';
import { createCursorCodec } from '../../../lib/pipeline/cursor-codec';
import { parseList } from '../../../lib/doors/rest/parse/parse-list';
import type { CommandContext } from '../../../lib/pipeline/stage-types';
import { orders } from '../support/schema-fixture';
import { thrown } from '../support/thrown';

const config = { defaultLimit: 100, maxLimit: 1000 } as ResolvedConfig;
const cursors = createCursorCodec(randomBytes(32));
const requestOf = (query: string): GatewayRequest => ({ id: 'r', method: 'GET', segments: ['orders'], rawSegments: ['orders'], query: [...new URLSearchParams(query)], headers: {}, body: undefined, loopback: true });
const patternOf = (query: string) => queryPattern(parseList(orders, requestOf(query).query, config, cursors));

describe('queryPattern', () => {
  it('drops values, keeps names, and orders parameters canonically whatever the spelling', () => {
    const expected = 'GET orders select=id,total status=eq total=gt sort=-placed_at limit';
    expect(patternOf('select=id,total&status=eq.paid&total=gt.5&sort=-placed_at&limit=5')).toBe(expected);
    expect(patternOf('limit=99&total.gt=7&sort=-placed_at&status=shipped&select=id,total')).toBe(expected);
    expect(patternOf('')).toBe('GET orders');
    expect(patternOf('status=in.(a,b)&notes=is_null&search=x&count=exact&offset=3')).toBe('GET orders notes=is_null status=in search count=exact offset');
  });
});

describe('query allow-list stage', () => {
  const list = parseQueryAllowList('# comment\n\nGET   orders  select=id limit\n');
  const stage = createAllowListStage({ queries: list, patternOf: queryPattern });
  const ctx = (query: string) => ({ command: parseList(orders, requestOf(query).query, config, cursors), request: requestOf(query) }) as unknown as CommandContext;

  it('lets listed patterns through and refuses others with their pattern', () => {
    expect(list.size).toBe(1);
    expect(stage(ctx('select=id&limit=2'))).toMatchObject({ kind: 'read' });
    const error = thrown(() => stage(ctx('select=id')), GatewayError);
    expect(error).toMatchObject({ code: 'QUERY_NOT_ALLOWED', details: { pattern: 'GET orders select=id' } });
  });

  // The door spells the pattern (Door.pattern): the stage compares what it is given and knows no grammar.
  it('compares the pattern the door spells, not a spelling of its own', () => {
    const spelled = parseQueryAllowList('GET orders as-the-door-spells-it\n');
    const spelling = createAllowListStage({ queries: spelled, patternOf: (command) => `GET ${(command as { table: { name: string } }).table.name} as-the-door-spells-it` });
    expect(spelling(ctx('select=id&limit=2'))).toMatchObject({ kind: 'read' });
    const other = createAllowListStage({ queries: spelled, patternOf: () => 'GET orders select=id limit' });
    expect(thrown(() => other(ctx('select=id&limit=2')), GatewayError)).toMatchObject({ code: 'QUERY_NOT_ALLOWED', details: { pattern: 'GET orders select=id limit' } });
  });

  it('is not made with a query list and no door to spell patterns (fail closed)', () => {
    expect(() => createAllowListStage({ queries: list })).toThrow(/patternOf/);
  });

  it('refuses lines that are not patterns', () => {
    expect(() => parseQueryAllowList('orders select=id\n')).toThrow(GatewayConfigError);
    expect(() => parseQueryAllowList('GET orders\nPUT orders\n')).toThrow(/line 2/);
  });
});
