/**
 * parse for POST / PATCH / DELETE: what reaches the command (the body text untouched, the
 * resolved columns, returning, the conflict target) and what is refused before any SQL.
 */
import { GatewayError } from '../../../lib/errors/gateway-error';
import { parseDelete } from '../../../lib/doors/rest/parse/parse-delete';
import { parseInsert } from '../../../lib/doors/rest/parse/parse-insert';
import { parseUpdate } from '../../../lib/doors/rest/parse/parse-update';
import { parsePrefer } from '../../../lib/doors/shared/parse-prefer';
import { testConfig } from '../auth/config-fixture';
import { items, writeRequest } from './write-fixture';

const config = testConfig({ maxBatchSize: 3 });
const insert = (body: string | undefined, options: Parameters<typeof writeRequest>[2] = {}) => parseInsert(items, writeRequest('POST', body, options), config);

function errorOf(fn: () => unknown): GatewayError {
  try {
    fn();
  } catch (err) {
    if (err instanceof GatewayError) return err;
    throw err;
  }
  throw new Error('expected a GatewayError');
}

describe('parseInsert', () => {
  it('keeps the body text exactly as received, so big numbers are never rounded by JS', () => {
    const text = '{"sku":"a","big":9223372036854775807}';
    const command = insert(text);
    expect(command.body).toBe(text);
    expect(command.batch).toBe(false);
    expect(command.rowCount).toBe(1);
  });

  it('collects the columns named by any row of a batch, in table order', () => {
    const command = insert('[{"qty":1},{"sku":"b","name":"n"}]');
    expect(command.batch).toBe(true);
    expect(command.rowCount).toBe(2);
    expect(command.columns.map((c) => c.name)).toEqual(['sku', 'name', 'qty']);
  });

  it('returns every column without returning, the named ones with it', () => {
    expect(insert('{}').returning).toBe(items.columns);
    expect(insert('{}').explicitReturning).toBe(false);
    const command = insert('{}', { query: 'returning=sku,id,sku' });
    expect(command.returning.map((c) => c.name)).toEqual(['sku', 'id']);
    expect(command.explicitReturning).toBe(true);
  });

  it('refuses an unknown returning column, and parameters other than returning', () => {
    expect(errorOf(() => insert('{}', { query: 'returning=skux' })).code).toBe('UNKNOWN_COLUMN');
    expect(errorOf(() => insert('{}', { query: 'select=sku' })).code).toBe('PARSE_ERROR');
    expect(errorOf(() => insert('{}', { query: 'returning=' })).code).toBe('PARSE_ERROR');
  });

  it('names the row of an unknown key, a generated column and an identity ALWAYS column', () => {
    const unknown = errorOf(() => insert('[{"sku":"a"},{"skx":"b"}]'));
    expect([unknown.code, unknown.details, unknown.hint]).toEqual(['UNKNOWN_COLUMN', { table: 'items', column: 'skx', in: 'body', row: 1 }, 'Did you mean `sku`?']);
    expect(errorOf(() => insert('[{"qty_doubled":2}]'))).toMatchObject({ code: 'VALIDATION_ERROR', details: { column: 'qty_doubled', row: 0 } });
    expect(errorOf(() => insert('{"id":2}'))).toMatchObject({ code: 'VALIDATION_ERROR', details: { column: 'id' } });
  });

  it('refuses a non-object row with its index', () => {
    expect(errorOf(() => insert('[{},2]'))).toMatchObject({ code: 'PARSE_ERROR', details: { row: 1 } });
    expect(errorOf(() => insert('"x"')).code).toBe('PARSE_ERROR');
  });

  it('refuses a batch over max_batch_size with 413', () => {
    expect(errorOf(() => insert('[{},{},{},{}]'))).toMatchObject({ code: 'PAYLOAD_TOO_LARGE', status: 413 });
    expect(insert('[{},{},{}]').rowCount).toBe(3);
  });

  it('refuses a non-JSON media type with 415, and an empty or invalid body with 400', () => {
    expect(errorOf(() => insert('{}', { headers: { 'content-type': 'text/plain' } })).status).toBe(415);
    expect(errorOf(() => insert(undefined)).code).toBe('PARSE_ERROR');
    expect(errorOf(() => insert('{"a":')).code).toBe('PARSE_ERROR');
  });

  it('refuses nesting deeper than 64 levels without overflowing the stack', () => {
    expect(errorOf(() => insert(`{"name":${'['.repeat(65)}${']'.repeat(65)}}`))).toMatchObject({ code: 'PARSE_ERROR', details: { max_depth: 64 } });
    expect(insert(`{"name":${'['.repeat(62)}${']'.repeat(62)}}`).columns).toHaveLength(1);
    expect(errorOf(() => insert(`${'['.repeat(200000)}${']'.repeat(200000)}`)).code).toBe('PARSE_ERROR');
  });

  it('refuses Prefer: missing=default rather than silently storing NULL', () => {
    expect(errorOf(() => insert('[{}]', { headers: { prefer: 'missing=default' } })).code).toBe('PARSE_ERROR');
  });
});

describe('parseInsert: upsert', () => {
  it('is a plain insert without upsert headers', () => {
    expect(insert('{}').onConflict).toBeNull();
    expect(insert('{}', { headers: { 'x-upsert': 'false' } }).onConflict).toBeNull();
  });

  it('X-Upsert: true defaults the conflict target to the primary key', () => {
    const command = insert('{"sku":"a"}', { headers: { 'x-upsert': 'true' } });
    expect(command.onConflict?.columns.map((c) => c.name)).toEqual(['id']);
    expect(command.onConflict?.action).toBe('update');
  });

  it('X-On-Conflict names the columns of a unique constraint', () => {
    const command = insert('{"sku":"a"}', { headers: { 'x-upsert': 'true', 'x-on-conflict': 'sku' } });
    expect(command.onConflict?.columns.map((c) => c.name)).toEqual(['sku']);
  });

  it('Prefer: resolution=merge-duplicates / ignore-duplicates choose the action', () => {
    expect(insert('{}', { headers: { prefer: 'return=representation, resolution=merge-duplicates' } }).onConflict?.action).toBe('update');
    expect(insert('{}', { headers: { prefer: 'resolution=ignore-duplicates', 'x-on-conflict': 'sku' } }).onConflict).toMatchObject({ action: 'ignore' });
  });

  it('refuses conflict columns that are no unique constraint, naming the constraints that exist', () => {
    const err = errorOf(() => insert('{}', { headers: { 'x-upsert': 'true', 'x-on-conflict': 'sku,name' } }));
    expect(err.code).toBe('PARSE_ERROR');
    expect(err.details).toEqual({
      table: 'items',
      constraints: [
        { name: 'items_pkey', columns: ['id'], primary: true },
        { name: 'items_sku_key', columns: ['sku'], primary: false },
      ],
    });
  });

  it('refuses bad header values and X-On-Conflict without an upsert', () => {
    expect(errorOf(() => insert('{}', { headers: { 'x-upsert': 'yes' } })).code).toBe('PARSE_ERROR');
    expect(errorOf(() => insert('{}', { headers: { prefer: 'resolution=merge' } })).code).toBe('PARSE_ERROR');
    expect(errorOf(() => insert('{}', { headers: { 'x-on-conflict': 'sku' } })).code).toBe('PARSE_ERROR');
    expect(errorOf(() => insert('{}', { headers: { 'x-upsert': 'true', 'x-on-conflict': 'nope' } })).code).toBe('UNKNOWN_COLUMN');
  });
});

describe('parsePrefer', () => {
  it('reads comma-separated preferences, case-insensitive names, first one wins', () => {
    const p = parsePrefer('Return=minimal; foo=bar, resolution="ignore-duplicates", handling=strict, resolution=merge-duplicates');
    expect([...p]).toEqual([['return', 'minimal'], ['resolution', 'ignore-duplicates'], ['handling', 'strict']]);
  });
});

describe('parseUpdate / parseDelete', () => {
  const update = (body: string, query?: string) => parseUpdate(items, writeRequest('PATCH', body, { id: '7', ...(query ? { query } : {}) }), config);

  it('takes the key from the path and the columns from the body', () => {
    const command = update('{"name":"x","qty":2}', 'returning=qty');
    expect(command.key.map((k) => [k.column.name, k.value])).toEqual([['id', '7']]);
    expect(command.columns.map((c) => c.name)).toEqual(['name', 'qty']);
    expect(command.body).toBe('{"name":"x","qty":2}');
    expect(command.returning.map((c) => c.name)).toEqual(['qty']);
  });

  it('refuses an empty object and an array', () => {
    expect(errorOf(() => update('{}')).code).toBe('PARSE_ERROR');
    expect(errorOf(() => update('[{"name":"x"}]')).code).toBe('PARSE_ERROR');
  });

  it('delete: no returning by default (204), explicit returning kept', () => {
    const plain = parseDelete(items, writeRequest('DELETE', undefined, { id: '7' }));
    expect(plain.explicitReturning).toBe(false);
    const returning = parseDelete(items, writeRequest('DELETE', undefined, { id: '7', query: 'returning=sku' }));
    expect(returning.returning.map((c) => c.name)).toEqual(['sku']);
  });
});
