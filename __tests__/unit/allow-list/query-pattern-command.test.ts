/** queryPattern reads the command only: parse records what the request gave; an unknown kind has no pattern. */
import { randomBytes } from 'node:crypto';
import type { Command } from '../../../lib/command/command';
import type { ResolvedConfig } from '../../../lib/pipeline/resolved-config';
import { createCursorCodec } from '../../../lib/pipeline/cursor-codec';
import type { GatewayRequest } from '../../../lib/pipeline/gateway-request';
import { queryPattern } from '../../../lib/doors/shared/query-pattern';
import { parseChildren } from '../../../lib/doors/rest/parse/parse-children';
import { parseExplain } from '../../../lib/doors/rest/parse/parse-explain';
import { parseList } from '../../../lib/doors/rest/parse/parse-list';
import { orders, schema } from '../relations/relations-fixture';

const config = { defaultLimit: 100, maxLimit: 1000 } as ResolvedConfig;
const cursors = createCursorCodec(randomBytes(32));
const params = (query: string) => [...new URLSearchParams(query)];
const request = (path: string, query = ''): GatewayRequest => ({ id: 'r', method: 'GET', segments: path.split('/'), rawSegments: path.split('/'), query: params(query), headers: {}, body: undefined, loopback: true });

describe('queryPattern(command)', () => {
  it('records limit and offset as given in the command, so the pattern needs no request', () => {
    const command = parseList(orders, params('limit=5&offset=10'), config, cursors);
    expect([command.explicitLimit, command.explicitOffset]).toEqual([true, true]);
    expect(queryPattern(command)).toBe('GET orders limit offset');
    expect(queryPattern(parseList(orders, [], config, cursors))).toBe('GET orders');
    expect(queryPattern(parseExplain(orders, params('limit=1'), config, cursors))).toBe('GET orders/_explain limit');
  });

  it('names a child route by the segment the caller wrote (a relation name stays a relation name)', () => {
    const children = (path: string, query = '') => parseChildren(schema, schema.tablesByName.get(path.split('/')[0]!)!, request(path, query), config, cursors);
    expect(queryPattern(children('users/1/orders', 'limit=2'))).toBe('GET users/:id/orders limit');
    expect(queryPattern(children('users/1/shipments!sender'))).toBe('GET users/:id/shipments!sender');
  });

  it('fails closed on a command kind it does not know, never an empty pattern', () => {
    expect(() => queryPattern({ kind: 'stream' } as unknown as Command)).toThrow(/unhandled command kind/);
  });
});
