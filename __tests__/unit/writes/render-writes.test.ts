/** render for writes: status codes and envelopes of contract §3, 404 from the affected-row count. */
import { renderDelete, renderInsert, renderUpdate } from '../../../lib/doors/rest/respond/render-writes';
import type { WrittenShape } from '../../../lib/pipeline/plan';
import { parseDelete } from '../../../lib/doors/rest/parse/parse-delete';
import { parseInsert } from '../../../lib/doors/rest/parse/parse-insert';
import { parseUpdate } from '../../../lib/doors/rest/parse/parse-update';
import { testConfig } from '../auth/config-fixture';
import { items, writeRequest } from './write-fixture';

const config = testConfig();
const shape: WrittenShape = { kind: 'written', data: 0, count: 1 };
const single = parseInsert(items, writeRequest('POST', '{"sku":"a"}'), config);
const batch = parseInsert(items, writeRequest('POST', '[{"sku":"a"},{"sku":"b"}]'), config);
const update = parseUpdate(items, writeRequest('PATCH', '{"sku":"a"}', { id: '1' }), config);
const del = parseDelete(items, writeRequest('DELETE', undefined, { id: '1' }));
const delReturning = parseDelete(items, writeRequest('DELETE', undefined, { id: '1', query: 'returning=sku' }));

describe('render writes', () => {
  it('insert: 201 {"data":row} / {"data":[rows],"count":n}, PostgreSQL text spliced as is', () => {
    expect(renderInsert(single, shape, { rows: [['{"big":9223372036854775807}', '1']] })).toEqual({ status: 201, body: '{"data":{"big":9223372036854775807}}' });
    expect(renderInsert(batch, shape, { rows: [['[{"sku":"a"},{"sku":"b"}]', '2']] })).toEqual({ status: 201, body: '{"data":[{"sku":"a"},{"sku":"b"}],"count":2}' });
    expect(renderInsert(single, shape, { rows: [[null, '0']] })).toEqual({ status: 201, body: '{"data":null}' });
  });

  it('update: 200 with the row, 404 when no visible row matched', () => {
    expect(renderUpdate(update, shape, { rows: [['{"sku":"a"}', '1']] })).toEqual({ status: 200, body: '{"data":{"sku":"a"}}' });
    expect(() => renderUpdate(update, shape, { rows: [[null, '0']] })).toThrow(expect.objectContaining({ code: 'NOT_FOUND' }));
  });

  it('delete: 204 without a body, 200 with returning, 404 when nothing was deleted', () => {
    expect(renderDelete(del, shape, { rows: [['{}', '1']] })).toEqual({ status: 204, body: null });
    expect(renderDelete(delReturning, shape, { rows: [['{"sku":"a"}', '1']] })).toEqual({ status: 200, body: '{"data":{"sku":"a"}}' });
    expect(() => renderDelete(del, shape, { rows: [[null, '0']] })).toThrow(expect.objectContaining({ code: 'NOT_FOUND' }));
  });
});
