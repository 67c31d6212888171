/**
 * The REST door's batch stage, without a database: `POST /_batch` bodies -> operations (shape
 * checks, caps, references), references resolved against earlier answers with every digit kept,
 * bulk-update rows -> single PATCH requests, and which requests expand at all.
 */
import { GatewayError } from '../../../lib/errors/gateway-error';
import { parseBatch } from '../../../lib/doors/rest/batch/parse-batch';
import { toOperation } from '../../../lib/doors/rest/batch/operation-template';
import { resolveReference, parseReference } from '../../../lib/doors/rest/batch/resolve-reference';
import { bulkUpdate } from '../../../lib/doors/rest/batch/bulk-update';
import { expandRequest } from '../../../lib/doors/rest/batch/expand-request';
import type { GatewayRequest } from '../../../lib/pipeline/gateway-request';
import type { SchemaCache } from '../../../lib/schema/schema-types';
import { testConfig } from '../auth/config-fixture';
import { items, writeRequest } from '../writes/write-fixture';

const config = testConfig({ maxBatchOperations: 3, maxBatchSize: 2, maxRequestBodyBytes: 200 });
const batchRequest = (body: string): GatewayRequest => ({ ...writeRequest('POST', body), segments: ['_batch'], rawSegments: ['_batch'] });

function errorOf(fn: () => unknown): GatewayError {
  try {
    fn();
  } catch (err) {
    if (err instanceof GatewayError) return err;
    throw err;
  }
  throw new Error('expected a GatewayError');
}

describe('parseBatch', () => {
  it('makes each operation a single request: method, path, query, the body text as written, JSON media types', () => {
    const [op] = parseBatch(batchRequest('[{"method":"POST","path":"/orders?returning=id","query":{"a":"eq.1","b":["gt.1","lt.9"]},"body":{"big":9223372036854775807,"n":1.000000000000000001}}]'), config);
    const request = toOperation(op!, batchRequest('[]'), 1000).request([]);
    expect(request.method).toBe('POST');
    expect(request.segments).toEqual(['orders']);
    expect(request.query).toEqual([['returning', 'id'], ['a', 'eq.1'], ['b', 'gt.1'], ['b', 'lt.9']]);
    expect(request.body).toBe('{"big":9223372036854775807,"n":1.000000000000000001}');
    expect(request.headers).toEqual({ accept: 'application/json', 'content-type': 'application/json' });
  });

  it('refuses more operations than max_batch_operations with 413 and details', () => {
    const err = errorOf(() => parseBatch(batchRequest(JSON.stringify(Array(4).fill({ method: 'GET', path: '/orders' }))), config));
    expect(err.code).toBe('PAYLOAD_TOO_LARGE');
    expect(err.details).toEqual({ operations: 4, max_batch_operations: 3 });
  });

  it.each([
    ['[{"method":"GET","path":"/orders","body":{}}]', /takes no body/],
    ['[{"method":"GET","path":"/orders","headers":{"x-gw-role":"admin"}}]', /Prefer only/],
    ['[{"method":"GET","path":"/orders","query":{"a":1}}]', /query parameter/],
    ['[{"method":"GET","path":"/_batch"}]', /cannot contain a batch/],
    ['[{"method":"GET","path":"/%zz"}]', /percent-encoding/],
  ])('refuses %s naming operation 0', (body, message) => {
    const err = errorOf(() => parseBatch(batchRequest(body), config));
    expect(err.code).toBe('PARSE_ERROR');
    expect(err.message).toMatch(message);
    expect(err.details).toEqual({ operation: 0 });
  });

  it('refuses a reference to the operation itself or a later one, before any SQL', () => {
    const err = errorOf(() => parseBatch(batchRequest('[{"method":"POST","path":"/orders","body":{"x":{"$ref":"0.id"}}}]'), config));
    expect(err.code).toBe('BATCH_REFERENCE_INVALID');
    expect(err.details).toEqual({ ref: '0.id', operation: 0 });
  });

  it('checks with stand-ins, and runs with the referenced values (body: the JSON text; query: an equality filter)', () => {
    const ops = parseBatch(batchRequest('[{"method":"POST","path":"/orders","body":{"id":1}},{"method":"GET","path":"/items","query":{"order_id":{"$ref":"0.id"}}},{"method":"POST","path":"/items","body":[{"order_id":{"$ref":"0.id"},"q":1}]}]'), config);
    const [, read, write] = ops.map((t) => toOperation(t, batchRequest('[]'), 1000));
    expect(read!.checked.query).toEqual([['order_id', 'eq.']]);
    expect(write!.checked.body).toBe('[{"order_id":null,"q":1}]');
    const earlier = [{ status: 201, body: '{"data":{"id":12345678901234567890}}' }];
    expect(read!.request(earlier).query).toEqual([['order_id', 'eq.12345678901234567890']]);
    expect(write!.request(earlier).body).toBe('[{"order_id":12345678901234567890,"q":1}]');
  });

  it("refuses an operation whose body, references resolved, is over max_request_body_bytes", () => {
    const [, op] = parseBatch(batchRequest('[{"method":"GET","path":"/a"},{"method":"POST","path":"/b","body":{"x":{"$ref":"0.v"}}}]'), config).map((t) => toOperation(t, batchRequest('[]'), 50));
    const err = errorOf(() => op!.request([{ status: 200, body: `{"data":{"v":"${'x'.repeat(100)}"}}` }]));
    expect(err.code).toBe('PAYLOAD_TOO_LARGE');
  });
});

describe('resolveReference', () => {
  const ref = (text: string, at = 9) => parseReference({ $ref: text }, at);
  const answers = [
    { status: 201, body: '{"data":[{"id":7,"tags":["a","b"]}],"count":1}' },
    { status: 200, body: '{"data":[{"id":1},{"id":2}],"count":2}' },
    { status: 204, body: null },
  ];
  it('steps over a one-row array, walks keys and indexes, and keeps the JSON text', () => {
    expect(resolveReference(ref('0.id'), answers)).toBe('7');
    expect(resolveReference(ref('0.tags.1'), answers)).toBe('"b"');
    expect(resolveReference(ref('1.1.id'), answers)).toBe('2');
  });
  it.each([['1.id'], ['0.nope'], ['2.id']])('refuses %s (ambiguous, missing, no body)', (text) => {
    expect(errorOf(() => resolveReference(ref(text), answers)).code).toBe('BATCH_REFERENCE_INVALID');
  });
  it.each([[{ $ref: 'x.id' }], [{ $ref: '0.' }], [{ $ref: 0 }], [{ $ref: '0.id', extra: 1 }]])('refuses the malformed reference %j', (value) => {
    expect(errorOf(() => parseReference(value, 5)).code).toBe('BATCH_REFERENCE_INVALID');
  });
});

describe('bulkUpdate', () => {
  const patch = (body: string, headers: Record<string, string> = {}) => bulkUpdate(items, writeRequest('PATCH', body, { headers }), config);
  it('makes each row a PATCH of /{table}/:key with the rest of the row as its body, keeping digits', () => {
    const expansion = patch('[{"id":"a,b","qty":1},{"qty":2.50,"id":12345678901234567890}]');
    const [first, second] = expansion.operations.map((o) => o.request([]));
    expect(first!.rawSegments).toEqual([items.name, 'a%2Cb']);
    expect(first!.body).toBe('{"qty":1}');
    expect(second!.rawSegments).toEqual([items.name, '12345678901234567890']);
    expect(second!.body).toBe('{"qty":2.50}');
    expect(expansion.operations.map((o) => o.where)).toEqual([{ row: 0 }, { row: 1 }]);
    expect(expansion.skipsNotFound).toBe(false);
  });
  it('skips missing rows only with Prefer: missing=ignore, and lists them', () => {
    const expansion = patch('[{"id":1,"qty":1},{"id":2,"qty":2}]', { prefer: 'missing=ignore' });
    expect(expansion.skipsNotFound).toBe(true);
    expect(expansion.answer([undefined, { status: 200, body: '{"data":{"id":2}}' }])).toEqual({ status: 200, body: '{"data":[{"id":2}],"count":1,"missing":[0]}' });
  });
  it('refuses more rows than max_batch_size (413), a row without its key (400 with details.row), and unknown Prefer values', () => {
    expect(errorOf(() => patch('[{"id":1},{"id":2},{"id":3}]')).code).toBe('PAYLOAD_TOO_LARGE');
    const err = errorOf(() => patch('[{"id":1,"qty":1},{"qty":2}]'));
    expect(err.code).toBe('PARSE_ERROR');
    expect(err.details).toEqual({ row: 1 });
    expect(errorOf(() => patch('[{"id":1,"qty":1}]', { prefer: 'missing=default' })).code).toBe('PARSE_ERROR');
  });
});

describe('expandRequest', () => {
  const schema = { tablesByName: new Map([[items.name, items]]) } as unknown as SchemaCache;
  it('expands POST /_batch and PATCH /{table} with an array, and nothing else', () => {
    expect(expandRequest(batchRequest('[]'), schema, config)).toBeDefined();
    expect(expandRequest({ ...writeRequest('PATCH', '[{"id":1}]'), segments: [items.name] }, schema, config)).toBeDefined();
    expect(expandRequest({ ...writeRequest('PATCH', '{"qty":1}'), segments: [items.name] }, schema, config)).toBeUndefined();
    expect(expandRequest({ ...writeRequest('POST', '{"qty":1}'), segments: [items.name] }, schema, config)).toBeUndefined();
    expect(expandRequest({ ...writeRequest('GET', undefined), segments: ['_batch'] }, schema, config)).toBeUndefined();
    expect(expandRequest({ ...writeRequest('POST', '[]'), segments: ['_batch', 'x'] }, schema, config)).toBeUndefined();
  });
});
