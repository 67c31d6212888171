/**
 * Rendering reads column positions only from plan.shape: a statement whose columns are in another
 * order renders the same body when its shape says so, and a shape of the wrong kind is refused.
 */
import { randomBytes } from 'node:crypto';
import type { ResolvedConfig } from '../../../lib/pipeline/resolved-config';
import { renderResult } from '../../../lib/doors/rest/respond/render-result';
import { createCursorCodec } from '../../../lib/pipeline/cursor-codec';
import type { ResultShape } from '../../../lib/pipeline/plan';
import { shapeOf } from '../../../lib/stages/compile/shape-of';
import { parseList } from '../../../lib/doors/rest/parse/parse-list';
import { parseInsert } from '../../../lib/doors/rest/parse/parse-insert';
import { testConfig } from '../auth/config-fixture';
import { orders } from '../support/schema-fixture';
import { items, writeRequest } from '../writes/write-fixture';

const config = { defaultLimit: 100, maxLimit: 1000 } as ResolvedConfig;
const cursors = createCursorCodec(randomBytes(32));
const list = (query: string) => parseList(orders, [...new URLSearchParams(query)], config, cursors);

describe('renderResult reads plan.shape', () => {
  it("compile's shape for a list: data, count, last key, then the total", () => {
    const command = list('count=exact&limit=1');
    expect(shapeOf(command)).toEqual({ kind: 'list', data: 0, count: 1, lastKey: 2, total: 3, parentVisible: null });
    expect(renderResult(command, { shape: shapeOf(command) }, { rows: [['[{"id":1}]', '1', null, '9']] }, cursors).body).toBe('{"data":[{"id":1}],"count":1,"limit":1,"offset":0,"total":9}');
  });

  it('follows the positions the shape names, whatever the order of the columns', () => {
    const command = list('count=exact&limit=1');
    const shape: ResultShape = { kind: 'list', data: 3, count: 2, lastKey: 1, total: 0, parentVisible: null };
    expect(renderResult(command, { shape }, { rows: [['9', null, '1', '[{"id":1}]']] }, cursors).body).toBe('{"data":[{"id":1}],"count":1,"limit":1,"offset":0,"total":9}');
    const insert = parseInsert(items, writeRequest('POST', '{"sku":"a"}'), testConfig());
    expect(renderResult(insert, { shape: { kind: 'written', data: 1, count: 0 } }, { rows: [['1', '{"sku":"a"}']] }, cursors)).toEqual({ status: 201, body: '{"data":{"sku":"a"}}' });
  });

  it('refuses a shape of another kind than the command (a replacement compile stage bug), rather than misreading the row', () => {
    expect(() => renderResult(list(''), { shape: { kind: 'value', value: 0 } }, { rows: [['[]']] }, cursors)).toThrow(/result shape is value, expected list/);
  });
});
