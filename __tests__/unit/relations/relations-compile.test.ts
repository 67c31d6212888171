/**
 * Exact SQL of expansions, child routes, aggregates and explain (no database), and how the list
 * row's columns are read back. The integration tests run the same statements against PostgreSQL.
 */
import { operationOf } from '../../../lib/command/command';
import { randomBytes } from 'node:crypto';
import type { ResolvedConfig } from '../../../lib/pipeline/resolved-config';
import { GatewayError } from '../../../lib/errors/gateway-error';
import type { GatewayRequest } from '../../../lib/pipeline/gateway-request';
import { renderResult } from '../../../lib/doors/rest/respond/render-result';
import { compileSql } from '../../../lib/sql/sql';
import { compileAggregate } from '../../../lib/stages/compile/compile-aggregate';
import { compilePlan } from '../../../lib/stages/compile/compile-plan';
import { compileGet } from '../../../lib/stages/compile/compile-get';
import { compileList, listColumns } from '../../../lib/stages/compile/compile-list';
import { shapeOf } from '../../../lib/stages/compile/shape-of';
import { createCursorCodec } from '../../../lib/pipeline/cursor-codec';
import { parseAggregate } from '../../../lib/doors/rest/parse/parse-aggregate';
import { parseChildren } from '../../../lib/doors/rest/parse/parse-children';
import { parseExplain } from '../../../lib/doors/rest/parse/parse-explain';
import { parseGet } from '../../../lib/doors/rest/parse/parse-get';
import { parseList } from '../../../lib/doors/rest/parse/parse-list';
import { thrown } from '../support/thrown';
import { orders, schema, weird } from './relations-fixture';

const config = { defaultLimit: 100, maxLimit: 1000, searchConfig: undefined } as ResolvedConfig;
const cursors = createCursorCodec(randomBytes(32));
const params = (query: string) => [...new URLSearchParams(query)];
const list = (query: string, table = orders) => parseList(table, params(query), config, cursors);
const listSql = (query: string, table = orders) => compileSql(compileList(list(query, table), undefined));
const request = (path: string, query = ''): GatewayRequest =>
  ({ method: 'GET', segments: path.split('/').map(decodeURIComponent), rawSegments: path.split('/'), query: params(query) }) as unknown as GatewayRequest;
const children = (path: string, query = '') => parseChildren(schema, schema.tablesByName.get(path.split('/')[0]!)!, request(path, query), config, cursors);
const error = (fn: () => unknown): GatewayError => thrown(fn, GatewayError);

const USER = `(SELECT to_json(_e.*) FROM (SELECT _x."id", _x."email", _x."name" FROM "public"."users" AS _x WHERE _x."id" = _q."user_id" LIMIT 1) AS _e) AS "user"`;
const ITEMS = `(SELECT coalesce(json_agg(_e.*), '[]') FROM (SELECT _x."id", _x."order_id", _x."price" FROM "public"."order_items" AS _x WHERE _x."order_id" = _q."id" ORDER BY _x."id") AS _e) AS "order_items"`;

describe('compile list with expand', () => {
  it('limits the page first, then adds one correlated subquery per relation (direct shape), FK column kept internal', () => {
    const q = listSql('select=id,status&expand=user,nested:order_items&status=paid&limit=20');
    expect(q.text).toBe(
      `SELECT coalesce(json_agg(_p.*), '[]')::text, count(*)::text, json_build_array((array_agg(_p."id"::text))[count(*)])::text FROM (SELECT _q."id", _q."status", ${USER}, ${ITEMS} FROM (SELECT _t."id", _t."status", _t."user_id" FROM "public"."orders" AS _t WHERE _t."status" = $1::text ORDER BY _t."id" ASC NULLS LAST LIMIT 20 OFFSET 0) AS _q) AS _p`,
    );
    expect(q.values).toEqual(['paid']);
  });

  it('puts the expansions in the LATERAL row when the ordering keys are not selected', () => {
    const q = listSql('select=status&sort=-total&expand=user&limit=5');
    expect(q.text).toBe(
      `SELECT coalesce(json_agg(_p.r), '[]')::text, count(*)::text, json_build_array((array_agg(_p."k0"::text))[count(*)], (array_agg(_p."k1"::text))[count(*)])::text FROM (SELECT to_json(_r.*) AS r, _q."total" AS "k0", _q."id" AS "k1" FROM (SELECT _t."status", _t."total", _t."id", _t."user_id" FROM "public"."orders" AS _t ORDER BY _t."total" DESC NULLS FIRST, _t."id" ASC NULLS LAST LIMIT 5 OFFSET 0) AS _q CROSS JOIN LATERAL (SELECT _q."status", ${USER}) AS _r) AS _p`,
    );
  });

  it('leaves the statement without expand exactly as before (regression: expand must not change plain lists)', () => {
    expect(listSql('select=id&limit=3').text).toBe(
      `SELECT coalesce(json_agg(_p.*), '[]')::text, count(*)::text, json_build_array((array_agg(_p."id"::text))[count(*)])::text FROM (SELECT _t."id" FROM "public"."orders" AS _t ORDER BY _t."id" ASC NULLS LAST LIMIT 3 OFFSET 0) AS _p`,
    );
  });

  it('quotes hostile FK and relation names', () => {
    const q = listSql('select=id&expand="a""b"', weird);
    expect(q.text).toContain(`WHERE _x."id" = _q."a""b_id" LIMIT 1) AS _e) AS "a""b" FROM (SELECT _t."id", _t."a""b_id" FROM "public"."we""ird table" AS _t`);
  });
});

describe('compile get with expand', () => {
  it('adds the expansions to the LATERAL row of the single-row read', () => {
    const command = parseGet(orders, request('orders/7', 'select=id&expand=user'));
    expect(compileSql(compileGet(command)).text).toBe(
      `SELECT to_json(_r.*)::text FROM "public"."orders" AS _t CROSS JOIN LATERAL (SELECT _t."id", ${USER.replace(/_q\./g, '_t.')}) AS _r WHERE _t."id" = $1::bigint`,
    );
  });

  it('accepts only select and expand', () => {
    expect(error(() => parseGet(orders, request('orders/7', 'limit=1'))).hint).toBe('A single-row read accepts select and expand.');
  });
});

describe('child route', () => {
  it('scopes the child list to the parent key, and reports whether the parent is visible', () => {
    const command = children('users/1/orders', 'count=exact&select=id');
    expect(command.table).toBe(orders);
    const q = compileSql(compileList(command, undefined));
    expect(q.text).toBe(
      `SELECT coalesce(json_agg(_p.*), '[]')::text, count(*)::text, json_build_array((array_agg(_p."id"::text))[count(*)])::text, (SELECT count(*) FROM "public"."orders" AS _t WHERE _t."user_id" = $1::integer)::text, (EXISTS (SELECT 1 FROM "public"."users" AS _pa WHERE _pa."id" = $2::integer))::text FROM (SELECT _t."id" FROM "public"."orders" AS _t WHERE _t."user_id" = $3::integer ORDER BY _t."id" ASC NULLS LAST LIMIT 100 OFFSET 0) AS _p`,
    );
    expect(q.values).toEqual(['1', '1', '1']);
    expect(listColumns(command)).toEqual({ data: 0, count: 1, lastKey: 2, total: 3, parentVisible: 4 });
    expect(listColumns(children('users/1/orders'))).toEqual({ data: 0, count: 1, lastKey: 2, total: null, parentVisible: 3 });
  });

  it('asks to disambiguate two FKs to the parent and follows the one named', () => {
    const e = error(() => children('users/1/shipments'));
    expect(e.code).toBe('PARSE_ERROR');
    expect(e.hint).toBe('Use one of: /users/:id/shipments!recipient, /users/:id/shipments!sender.');
    expect(children('users/1/shipments!sender').parent!.foreignKey.columns[0]!.name).toBe('sender_id');
  });

  it('is a 404 for an unknown table or a table without an FK to the parent', () => {
    expect(error(() => children('users/1/nope')).code).toBe('NOT_FOUND');
    expect(error(() => children('orders/1/users')).code).toBe('NOT_FOUND');
  });

  it('renders 404 when the parent row is not visible, the page otherwise', () => {
    const command = children('users/1/orders', 'count=exact');
    const render = (visible: string) => renderResult(command, { shape: shapeOf(command) }, { rows: [['[]', '0', null, '0', visible]] }, cursors);
    const e = error(() => render('false'));
    expect(e.code).toBe('NOT_FOUND');
    expect(e.message).toBe('No visible row of `users` has that key.');
    expect(render('true').body).toBe('{"data":[],"count":0,"limit":100,"offset":0,"total":0}');
  });
});

describe('aggregate', () => {
  it('builds the JSON in PostgreSQL with the names bound as parameters', () => {
    const q = compileSql(compileAggregate(parseAggregate(orders, [['fn', 'sum'], ['column', 'total'], ['status', 'paid']]), undefined));
    expect(q.text).toBe(`SELECT json_build_object('fn', $1::text, 'column', $2::text, 'value', sum(_t."total"))::text FROM "public"."orders" AS _t WHERE _t."status" = $3::text`);
    expect(q.values).toEqual(['sum', 'total', 'paid']);
    expect(compileSql(compileAggregate(parseAggregate(orders, [['fn', 'count']]), undefined)).text).toBe(
      `SELECT json_build_object('fn', 'count', 'value', count(*))::text FROM "public"."orders" AS _t`,
    );
  });

  const bad: [(readonly [string, string])[], string][] = [
    [[], 'PARSE_ERROR'],
    [[['fn', 'median']], 'PARSE_ERROR'],
    [[['fn', 'sum']], 'PARSE_ERROR'],
    [[['fn', 'count'], ['column', 'id']], 'PARSE_ERROR'],
    [[['fn', 'avg'], ['column', 'status']], 'PARSE_ERROR'],
    [[['fn', 'max'], ['column', 'nope']], 'UNKNOWN_COLUMN'],
    [[['fn', 'count'], ['sort', 'id']], 'PARSE_ERROR'],
  ];
  it.each(bad)('refuses %j with %s', (query, code) => {
    expect(error(() => parseAggregate(orders, query)).code).toBe(code);
  });

  it('allows min/max on any column with an ordering', () => {
    expect(parseAggregate(orders, [['fn', 'min'], ['column', 'placed_at']]).aggregate.column!.name).toBe('placed_at');
  });
});

describe('explain', () => {
  it('is EXPLAIN (ANALYZE, FORMAT JSON) of exactly the list statement (same text, same values)', () => {
    const query = 'select=id&expand=user&status=paid&limit=5';
    const command = parseExplain(orders, params(query), config, cursors);
    const explained = compileSql(compilePlan(command.plan!, compileList(command, undefined)));
    const listed = listSql(query);
    expect(explained.text).toBe(`EXPLAIN (ANALYZE, FORMAT JSON) ${listed.text}`);
    expect(explained.values).toEqual(listed.values);
    expect([command.kind, operationOf(command)]).toEqual(['read', 'explain']);
  });

  it('renders the plan array under data.plan', () => {
    const command = parseExplain(orders, [], config, cursors);
    expect(renderResult(command, { shape: shapeOf(command) }, { rows: [['[{"Plan":{}}]']] }, cursors).body).toBe('{"data":{"plan":[{"Plan":{}}]}}');
  });
});
