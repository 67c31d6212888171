/**
 * The OpenAPI 3.1 document (GET /api/, GET /api/openapi.json, `tablegate openapi`) and the
 * TypeScript types (`tablegate gen types`) over the `describe_shop` schema
 * (__tests__/fixtures/096-describe.sql), checked by the real tools: the document validates with
 * @seriousme/openapi-schema-validator, openapi-typescript turns it into types, and those types and
 * the generated `Database` types compile under `tsc --strict` together with a file that uses them
 * (with `@ts-expect-error` lines that fail if the types were `any`). The real responses of the
 * gateway validate against the document's own response schemas, so the PostgreSQL type -> JSON
 * mapping is checked against what PostgreSQL really sends. The access policy's caller sees neither
 * the table nor the column it may not read.
 */
import { execFile, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import Ajv2020 from 'ajv/dist/2020';
import express from 'express';
import request from 'supertest';
import { createGateway, type Gateway } from '../../lib';
import { runCli } from '../support/cli-process';
import { tokenA } from '../support/gateway-app';
import { createTestDatabase, signToken, TEST_JWT_SECRET, type TestDatabase } from '../support/test-database';

const run = promisify(execFile);
const root = path.resolve(__dirname, '..', '..');
const validatorCli = path.join(root, 'node_modules/@seriousme/openapi-schema-validator/bin/validate-api-cli.js');
const openapiTsCli = path.join(root, 'node_modules/openapi-typescript/bin/cli.js');
const tscCli = path.join(root, 'node_modules/typescript/bin/tsc');
const haveTools = [validatorCli, openapiTsCli, tscCli].every((f) => fs.existsSync(f));
if (!haveTools) console.log('openapi.test.ts: @seriousme/openapi-schema-validator, openapi-typescript or typescript is not installed (npm ci): the tool checks are skipped');
const withTools = haveTools ? it : it.skip;

type Doc = { openapi: string; paths: Record<string, Record<string, any>>; components: { schemas: Record<string, any> } };

const policy = {
  default_decision: 'deny',
  tables: {
    customers: { operations: ['read'], read_columns: { except: ['secret_note'] } },
    orders: { operations: ['read', 'create', 'update'], write_columns: { except: ['note'] } },
    order_totals: { operations: ['read'] },
    order_lines: { operations: ['read', 'create', 'update', 'delete'], require_any_role: ['admin'] },
  },
} as const;

let db: TestDatabase;
let gateway: Gateway;
let policed: Gateway;
let app: express.Express;
let policedApp: express.Express;
let tmp: string;
const children: ChildProcess[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  gateway = createGateway({ databaseUrl: db.appUrl, jwtSecret: TEST_JWT_SECRET, schemas: ['describe_shop'] });
  policed = createGateway({ databaseUrl: db.appUrl, jwtSecret: TEST_JWT_SECRET, schemas: ['describe_shop'], access: { enabled: true, policy } as never });
  await Promise.all([gateway.ready, policed.ready]);
  app = express().use('/api', gateway);
  policedApp = express().use('/api', policed);
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tablegate-openapi-'));
});
afterAll(async () => {
  for (const child of children) child.kill();
  await Promise.all([gateway?.close(), policed?.close()]);
  await db?.drop();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

const get = (target: express.Express, url: string, token = tokenA) => request(target).get(url).set('Authorization', `Bearer ${token}`);
const member = signToken({ tenant_id: '11111111-1111-4111-8111-111111111111', user_id: 'alice', role: 'member' });
const admin = signToken({ tenant_id: '11111111-1111-4111-8111-111111111111', user_id: 'root', role: 'admin' });

describe('GET /{mount}/ and /{mount}/openapi.json', () => {
  it('serve the same OpenAPI 3.1 document of the tables, views and functions', async () => {
    const [slash, file] = await Promise.all([get(app, '/api/'), get(app, '/api/openapi.json')]);
    expect(slash.status).toBe(200);
    expect(slash.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(file.text).toBe(slash.text);
    const doc = slash.body as Doc;
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.paths).sort()).toEqual([
      '/_batch',
      '/_rpc/contracts',
      '/customers',
      '/customers/aggregate',
      '/customers/{id}',
      '/customers/{id}/orders',
      '/customers/_explain',
      '/order_lines',
      '/order_lines/aggregate',
      '/order_lines/{id}',
      '/order_lines/_explain',
      '/order_totals',
      '/order_totals/aggregate',
      '/order_totals/_explain',
      '/orders',
      '/orders/aggregate',
      '/orders/{id}',
      '/orders/{id}/order_lines',
      '/orders/_explain',
      '/rpc/order_count',
      '/rpc/orders_in',
      '/rpc/place_note',
    ].sort());
    // The view that cannot be written has no POST; the tables have one.
    expect(Object.keys(doc.paths['/order_totals']!)).toEqual(['get']);
    // PATCH on the collection: a bulk update (docs/writing.md); POST /_batch runs several requests.
    expect(Object.keys(doc.paths['/orders']!)).toEqual(['get', 'post', 'patch']);
    expect(Object.keys(doc.paths['/_batch']!)).toEqual(['post']);
    expect(Object.keys(doc.paths['/orders/{id}']!)).toEqual(['get', 'patch', 'delete']);
    expect(doc.components.schemas['order_status']).toEqual({ type: 'string', enum: ['open', 'paid'], description: 'PostgreSQL enum describe_shop.order_status' });
    const { properties, required } = doc.components.schemas['orders']!;
    expect(required).toEqual(['id', 'tenant_id', 'customer_id', 'status', 'note', 'total', 'placed_at', 'tags', 'meta', 'ref', 'total_cents']);
    expect(properties).toEqual({
      id: { type: 'integer', format: 'int32' },
      tenant_id: { type: 'string', format: 'uuid' },
      customer_id: { type: 'integer', format: 'int64' },
      status: { $ref: '#/components/schemas/order_status' },
      note: { type: ['string', 'null'] },
      total: { anyOf: [{ type: 'number' }, { type: 'string', enum: ['NaN', 'Infinity', '-Infinity'] }] },
      placed_at: { type: 'string', format: 'date-time' },
      tags: { type: ['array', 'null'], items: { type: ['string', 'null'] } },
      meta: {},
      ref: { type: ['string', 'null'], format: 'uuid' },
      total_cents: { type: ['integer', 'null'], format: 'int64' },
    });
    // Insert: the generated column is absent, defaults and NULL-able columns optional.
    const insert = doc.components.schemas['orders.insert']!;
    expect(Object.keys(insert.properties)).toEqual(['id', 'tenant_id', 'customer_id', 'status', 'note', 'total', 'placed_at', 'tags', 'meta', 'ref']);
    expect(insert.required).toEqual(['customer_id']);
    // GENERATED ALWAYS AS IDENTITY cannot be written.
    expect(Object.keys(doc.components.schemas['customers.insert']!.properties)).toEqual(['tenant_id', 'name', 'email', 'secret_note']);
    // Both filter spellings, the list parameters, the bearer scheme.
    const names = (doc.paths['/orders']!.get.parameters as { name?: string; $ref?: string }[]).map((p) => p.name ?? p.$ref);
    expect(names).toEqual(expect.arrayContaining(['select', '#/components/parameters/sort', '#/components/parameters/limit', '#/components/parameters/offset', '#/components/parameters/cursor', '#/components/parameters/count', '#/components/parameters/search', 'expand', 'status', 'status.eq', 'status.in', 'tags.contains', 'total.gte']));
    expect(names).not.toContain('status.contains');
    expect((doc as any).components.securitySchemes).toEqual({ bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } });
    expect(doc.paths['/orders']!.get.responses['400']).toEqual({ $ref: '#/components/responses/Error400' });
  });

  it('needs the credentials every route needs', async () => {
    const res = await request(app).get('/api/');
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('UNAUTHORIZED');
  });

  it('takes no query parameters (fail closed)', async () => {
    const res = await get(app, '/api/?select=id');
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('PARSE_ERROR');
  });

  it('leaves the other methods and routes as they were', async () => {
    expect((await request(app).post('/api/').set('Authorization', `Bearer ${tokenA}`)).status).toBe(404);
    expect((await get(app, '/api/orders')).body.count).toBe(2);
  });

  withTools('validates against the OpenAPI 3.1 schema (@seriousme/openapi-schema-validator)', async () => {
    const file = path.join(tmp, 'validate.json');
    fs.writeFileSync(file, (await get(app, '/api/openapi.json')).text);
    const { stdout } = await run(process.execPath, [validatorCli, file]);
    expect(JSON.parse(stdout)).toEqual({ valid: true });
    // The validator can fail: a document with a broken reference does not pass.
    const broken = JSON.parse(fs.readFileSync(file, 'utf8'));
    broken.paths['/orders'].get.responses['200'] = { content: {} };
    fs.writeFileSync(file, JSON.stringify(broken));
    await expect(run(process.execPath, [validatorCli, file])).rejects.toMatchObject({ code: 1 });
  }, 60_000);
});

describe('the response schemas match what the gateway really sends', () => {
  let doc: Doc;
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  /** The document's schema for a route's 2xx body, with component references inlined. */
  const schemaOf = (route: string, method: string, status: string): object => inline(doc.paths[route]![method].responses[status].content['application/json'].schema);
  const inline = (s: unknown): any => {
    if (Array.isArray(s)) return s.map(inline);
    if (s === null || typeof s !== 'object') return s;
    const ref = (s as { $ref?: string }).$ref;
    if (ref !== undefined) return inline(doc.components.schemas[ref.replace('#/components/schemas/', '')]);
    return Object.fromEntries(Object.entries(s).map(([k, v]) => [k, inline(v)]));
  };
  const check = (schema: object, body: unknown) => {
    const validate = ajv.compile(schema);
    expect({ body, errors: validate(body) ? null : validate.errors }).toEqual({ body, errors: null });
  };
  beforeAll(async () => {
    doc = (await get(app, '/api/openapi.json')).body;
  });

  it.each([
    ['/orders', '/api/orders'],
    ['/customers', '/api/customers'],
    ['/order_lines', '/api/order_lines'],
    ['/order_totals', '/api/order_totals'],
    ['/orders/{id}/order_lines', '/api/orders/1/order_lines'],
  ])('GET %s', async (route, url) => {
    const res = await get(app, url);
    expect(res.status).toBe(200);
    expect(res.body.data.length).toBeGreaterThan(0);
    check(schemaOf(route, 'get', '200'), res.body);
  });

  it('GET /orders/{id}, a NaN float and a wrong value that must fail the check', async () => {
    const res = await get(app, '/api/orders/1');
    check(schemaOf('/orders/{id}', 'get', '200'), res.body);
    expect(res.body.data.tags).toEqual(['a', null]);
    expect((await get(app, '/api/order_lines?id=eq.1')).body.data[0].price).toBe('NaN');
    const validate = ajv.compile(schemaOf('/orders/{id}', 'get', '200'));
    expect(validate({ data: { ...res.body.data, total: '12.50' } })).toBe(false);
    expect(validate({ data: { ...res.body.data, status: 'shipped' } })).toBe(false);
  });

  it('POST and PATCH bodies and their answers', async () => {
    const body = { customer_id: 1, status: 'paid', total: 1.25, tags: ['x'] };
    check(inline(doc.paths['/orders']!.post.requestBody.content['application/json'].schema), body);
    const created = await request(app).post('/api/orders').set('Authorization', `Bearer ${tokenA}`).send(body);
    expect(created.status).toBe(201);
    check(schemaOf('/orders', 'post', '201'), created.body);
    const patched = await request(app).patch(`/api/orders/${created.body.data.id}`).set('Authorization', `Bearer ${tokenA}`).send({ note: 'n' });
    check(schemaOf('/orders/{id}', 'patch', '200'), patched.body);
  });

  it('describes a nested insert (the order, its new customer first, its lines after it) and the gateway takes what it describes', async () => {
    const nested = doc.components.schemas['orders.insert.nested'];
    expect(Object.keys(nested.properties)).toEqual(expect.arrayContaining(['customer_id', 'total', 'customers', 'order_lines']));
    expect(nested.required ?? []).not.toContain('customer_id');
    expect(Object.keys(nested.properties.order_lines.items.properties)).not.toContain('order_id');
    const schema = inline(doc.paths['/orders']!.post.requestBody.content['application/json'].schema);
    const body = { customers: { name: 'Nested Co' }, total: 3, order_lines: [{ qty: 2, price: 1.5 }, { qty: 1 }] };
    check(schema, body);
    expect(ajv.compile(schema)({ ...body, order_lines: [{ order_id: 1, qty: 1 }] })).toBe(false);
    const created = await request(app).post('/api/orders').set('Authorization', `Bearer ${tokenA}`).send(body);
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject({ total: 3, customers: { name: 'Nested Co' }, order_lines: [{ qty: 2 }, { qty: 1 }] });
    check(schemaOf('/orders', 'post', '201'), created.body);
  });

  it('describes sort by a related column and the bulk update as one statement', () => {
    const sort = doc.components as unknown as { parameters: Record<string, { description: string }> };
    expect(sort.parameters.sort!.description).toContain('user.name');
    expect(doc.paths['/orders']!.patch.summary).toContain('in one statement');
  });

  it.each([
    ['/rpc/place_note', { order_id: 7 }],
    ['/rpc/orders_in', { wanted: 'paid' }],
    ['/rpc/order_count', undefined],
  ])('POST %s', async (route, body) => {
    check(inline(doc.paths[route]!.post.requestBody.content['application/json'].schema), body ?? {});
    const res = await request(app).post(`/api${route}`).set('Authorization', `Bearer ${tokenA}`).send(body);
    expect(res.status).toBe(200);
    check(schemaOf(route, 'post', '200'), res.body);
  });
});

describe('a caller sees only what the access policy lets it read', () => {
  it('the member never learns of order_lines nor of customers.secret_note', async () => {
    const res = await get(policedApp, '/api/', member);
    expect(res.status).toBe(200);
    expect(res.text).not.toContain('order_lines');
    expect(res.text).not.toContain('secret_note');
    const doc = res.body as Doc;
    expect(Object.keys(doc.components.schemas['customers']!.properties)).toEqual(['id', 'tenant_id', 'name', 'email']);
    // read only: no POST on customers; orders' insert and update leave out the column it may not write.
    expect(Object.keys(doc.paths['/customers']!)).toEqual(['get']);
    expect(Object.keys(doc.paths['/customers/{id}']!)).toEqual(['get']);
    expect(doc.components.schemas['orders.insert']!.properties.note).toBeUndefined();
    expect(doc.components.schemas['orders.update']!.properties.note).toBeUndefined();
    expect(doc.paths['/orders/{id}']!.delete).toBeUndefined();
  });

  it('the admin role sees order_lines, and each caller keeps its own document', async () => {
    const [asAdmin, asMember] = await Promise.all([get(policedApp, '/api/openapi.json', admin), get(policedApp, '/api/openapi.json', member)]);
    expect(Object.keys(asAdmin.body.paths)).toEqual(expect.arrayContaining(['/order_lines', '/orders/{id}/order_lines']));
    expect(asAdmin.text).not.toContain('secret_note');
    expect(asMember.text).not.toContain('order_lines');
  });

  it('a schema reload gives a new document', async () => {
    const before = await get(app, '/api/', admin);
    expect(before.text).not.toContain('coupon');
    await db.admin.query('ALTER TABLE describe_shop.orders ADD COLUMN coupon text');
    try {
      await gateway.reloadSchema();
      const after = await get(app, '/api/', admin);
      expect(after.body.components.schemas.orders.properties.coupon).toEqual({ type: ['string', 'null'] });
    } finally {
      await db.admin.query('ALTER TABLE describe_shop.orders DROP COLUMN coupon');
      await gateway.reloadSchema();
    }
  });
});

describe('TypeScript: gen types and openapi-typescript, compiled by tsc --strict', () => {
  withTools('both compile, and a wrong column or value is an error', async () => {
    const typesFile = path.join(tmp, 'database.ts');
    fs.writeFileSync(typesFile, await gateway.typeScript());
    const docFile = path.join(tmp, 'openapi.json');
    fs.writeFileSync(docFile, (await get(app, '/api/openapi.json')).text);
    await run(process.execPath, [openapiTsCli, docFile, '-o', path.join(tmp, 'openapi.ts')]);
    const generated = fs.readFileSync(typesFile, 'utf8');
    expect(generated).toContain("Relationships: {\n        customers: { table: \"customers\"; cardinality: 'one' };");
    expect(generated).toContain('      Insert: never;\n      Update: never;');
    // What a nested insert may fill (docs/writing.md, "Nested inserts"), read by the typed client's insert.
    expect(generated).toContain("      Nested: {\n        customers: { side: 'parent'; fills: \"customer_id\" };\n        order_lines: { side: 'child'; fills: \"order_id\" };\n      };");
    fs.writeFileSync(
      path.join(tmp, 'use.ts'),
      `import type { Database, Json } from './database';
import type { components, paths } from './openapi';

type Tables = Database['tables'];
type Order = Tables['orders']['Row'];
const order: Order = {
  id: 1, tenant_id: 't', customer_id: 1, status: 'paid', note: null, total: 12.5, placed_at: '2024-05-01T10:00:00+00:00',
  tags: ['a', null], meta: { gift: true }, ref: null, total_cents: 1250,
};
const status: Database['enums']['order_status'] = order.status;
// @ts-expect-error: not a label of the enum
const wrongStatus: Database['enums']['order_status'] = 'shipped';
// @ts-expect-error: no such column
const missing = order.nonexistent_column;
// @ts-expect-error: a number column
const wrongType: Order['total_cents'] = 'x';
const insert: Tables['orders']['Insert'] = { customer_id: 1 };
// @ts-expect-error: a generated column cannot be inserted
const generated: Tables['orders']['Insert'] = { customer_id: 1, total_cents: 5 };
// @ts-expect-error: customer_id is required
const incomplete: Tables['orders']['Insert'] = { status: 'open' };
// @ts-expect-error: an identity ALWAYS column cannot be inserted
const identity: Tables['customers']['Insert'] = { id: 1, name: 'x' };
const update: Tables['orders']['Update'] = { note: 'n' };
// @ts-expect-error: a view that cannot be written
const viewInsert: Tables['order_totals']['Insert'] = {};
const rel: Tables['orders']['Relationships']['order_lines'] = { table: 'order_lines', cardinality: 'many' };
const args: Database['functions']['place_note']['Args'] = { order_id: 1 };
// @ts-expect-error: order_id is required
const noArgs: Database['functions']['place_note']['Args'] = {};
const rows: Database['functions']['orders_in']['Returns'] = [order];
const count: Database['functions']['order_count']['Returns'] = 3;
const anything: Json = order.meta;
const fromOpenApi: components['schemas']['orders'] = order;
type ListQuery = NonNullable<paths['/orders']['get']['parameters']['query']>;
const query: ListQuery = { select: 'id', 'status.eq': 'paid', limit: 10 };
// @ts-expect-error: limit is an integer
const badQuery: ListQuery = { limit: 'ten' };
export const used = [status, wrongStatus, missing, wrongType, insert, generated, incomplete, identity, update, viewInsert, rel, args, noArgs, rows, count, anything, fromOpenApi, query, badQuery];
`,
    );
    const tsc = run(process.execPath, [tscCli, '--strict', '--noUncheckedIndexedAccess', '--noEmit', '--skipLibCheck', '--target', 'es2022', '--module', 'commonjs', path.join(tmp, 'use.ts')]);
    await expect(tsc.catch((e: { stdout: string }) => Promise.reject(new Error(e.stdout)))).resolves.toBeDefined();
  }, 120_000);
});

describe('the CLI', () => {
  it('tablegate openapi and tablegate gen types print the administrator’s view', async () => {
    const config = path.join(tmp, 'gw.toml');
    fs.writeFileSync(config, `[gateway]\ndatabase_url = ${JSON.stringify(db.appUrl)}\nschemas = ["describe_shop"]\n`);
    const out = path.join(tmp, 'cli-types.ts');
    const [openapi, types] = [runCli(children, ['openapi', '--config', config]), runCli(children, ['gen', 'types', '--config', config, '--out', out])];
    // stderr may carry the start-up warning about the view without row-level security; stdout is the document.
    expect({ code: await openapi.exit(30_000), stderr: openapi.stderr() }).toEqual({ code: 0, stderr: expect.not.stringContaining('error') });
    expect({ code: await types.exit(30_000), stderr: types.stderr() }).toEqual({ code: 0, stderr: expect.not.stringContaining('error') });
    const doc = JSON.parse(openapi.stdout());
    expect(doc.servers).toEqual([{ url: '/api' }]);
    expect(Object.keys(doc.components.schemas.customers.properties)).toContain('secret_note');
    expect(fs.readFileSync(out, 'utf8')).toBe(await gateway.typeScript());
    const usage = runCli(children, ['gen', 'typs']);
    expect(await usage.exit(10_000)).toBe(2);
    expect(usage.stderr()).toContain('did you mean gen types?');
  }, 60_000);
});
