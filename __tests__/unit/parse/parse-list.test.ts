import { randomBytes } from 'node:crypto';
import type { ReadCommand } from '../../../lib/command/command';
import { callerOrder, embedsOf, selectedColumns } from '../../../lib/command/read-items';
import type { ResolvedConfig } from '../../../lib/pipeline/resolved-config';
import { GatewayError } from '../../../lib/errors/gateway-error';
import { createCursorCodec } from '../../../lib/pipeline/cursor-codec';
import { parseList } from '../../../lib/doors/rest/parse/parse-list';
import { auditLog, orders, weird } from '../support/schema-fixture';
import { thrown } from '../support/thrown';

const config = { defaultLimit: 100, maxLimit: 1000 } as ResolvedConfig;
const cursors = createCursorCodec(randomBytes(32));

/** The parsed page read, and its root's parts under the names the default grammar gives them. */
function list(query: string, table = orders) {
  const read: ReadCommand = parseList(table, [...new URLSearchParams(query)], config, cursors);
  const { root } = read;
  return { ...read, select: selectedColumns(root), filters: root.where, sort: callerOrder(root, read.tieBreakers), order: root.order, limit: root.limit, offset: root.offset, countExact: read.count === 'exact', expand: embedsOf(root) };
}

const error = (fn: () => unknown): GatewayError => thrown(fn, GatewayError);

describe('parse list: filters', () => {
  const ops = [
    ['eq', '5'],
    ['ne', '5'],
    ['gt', '5'],
    ['gte', '5'],
    ['lt', '5'],
    ['lte', '5'],
  ] as const;
  it.each(ops)('%s gives the same filter in both spellings', (op, v) => {
    const keyStyle = list(`total.${op}=${v}`).filters;
    const valueStyle = list(`total=${op}.${v}`).filters;
    expect(keyStyle).toEqual([{ kind: 'compare', field: { column: orders.columnsByName.get('total'), path: [] }, op: op === 'ne' ? 'neq' : op, value: v, negate: false }]);
    expect(valueStyle).toEqual(keyStyle);
  });

  it('defaults to eq, and a value that merely contains a dot stays whole', () => {
    expect(list('status=shipped').filters[0]).toMatchObject({ op: 'eq', value: 'shipped' });
    expect(list('notes=a.b@x.com').filters[0]).toMatchObject({ op: 'eq', value: 'a.b@x.com' });
    expect(list('notes=eq.gt.5').filters[0]).toMatchObject({ op: 'eq', value: 'gt.5' });
  });

  it('parses in lists in both spellings, with quoted items', () => {
    expect(list('status=in.(new,"a,b",x)').filters[0]).toMatchObject({ kind: 'in', values: ['new', 'a,b', 'x'] });
    expect(list('status.in=new,paid').filters[0]).toMatchObject({ kind: 'in', values: ['new', 'paid'] });
    expect(list('status=in.()').filters[0]).toMatchObject({ kind: 'in', values: [] });
    expect(error(() => list('status=in.progress')).code).toBe('PARSE_ERROR');
  });

  it('turns * into the only wildcard of like/ilike and escapes % _ \\', () => {
    expect(list('notes=like.*50%_off*').filters[0]).toMatchObject({ op: 'like', value: '%50\\%\\_off%' });
    expect(list('notes.ilike=A*').filters[0]).toMatchObject({ op: 'ilike', value: 'A%' });
  });

  it('parses is_null in both spellings', () => {
    expect(list('notes=is_null').filters[0]).toMatchObject({ kind: 'is', value: 'null' });
    expect(list('notes.is_null=true').filters[0]).toMatchObject({ kind: 'is', value: 'null' });
    expect(list('notes.is_null=false').filters[0]).toMatchObject({ kind: 'is', value: 'not_null' });
    expect(error(() => list('notes.is_null=maybe')).code).toBe('PARSE_ERROR');
  });

  it('accepts contains only on array columns', () => {
    expect(list('tags=contains.vip').filters[0]).toMatchObject({ kind: 'contains', value: 'vip' });
    expect(error(() => list('notes.contains=x')).code).toBe('PARSE_ERROR');
  });

  it('keeps two filters on one column (a range) and ANDs different columns', () => {
    const { filters } = list('total.gte=10&total=lte.20&status=paid');
    expect(filters.map((f) => [f.kind === 'compare' ? f.field.column.name : '?', f.kind === 'compare' ? f.op : f.kind])).toEqual([
      ['total', 'gte'],
      ['total', 'lte'],
      ['status', 'eq'],
    ]);
  });

  it('rejects an unknown operator and an unknown column with a hint', () => {
    expect(error(() => list('total.between=1')).code).toBe('PARSE_ERROR');
    const e = error(() => list('stauts=paid'));
    expect(e.code).toBe('UNKNOWN_COLUMN');
    expect(e.hint).toContain('status');
    expect(error(() => list('nope.eq=1')).code).toBe('UNKNOWN_COLUMN');
  });

  it('rejects comparisons on json columns before any SQL exists', () => {
    expect(error(() => list('payload=eq.1')).code).toBe('PARSE_ERROR');
  });

  it('lets a column named like a reserved parameter be filtered key-style', () => {
    expect(list('limit.eq=5').filters[0]).toMatchObject({ op: 'eq', value: '5' });
  });

  it('treats hostile values as data', () => {
    const hostile = `'; DROP TABLE orders; --\u0000"`;
    expect(list(`status=${encodeURIComponent(hostile)}`).filters[0]).toMatchObject({ op: 'eq', value: hostile });
  });
});

describe('parse list: select, sort, paging', () => {
  it('selects named columns (quoted names may contain commas and quotes)', () => {
    expect(list('select=id,status').select.map((c) => c.name)).toEqual(['id', 'status']);
    expect(list('select="a""b","col with space",id', weird).select.map((c) => c.name)).toEqual(['a"b', 'col with space', 'id']);
    expect(list('').select).toEqual(orders.columns);
    expect(error(() => list('select=id,')).code).toBe('PARSE_ERROR');
    expect(error(() => list('select=id,nope')).code).toBe('UNKNOWN_COLUMN');
  });

  it('parses the four sort forms and appends the primary key as tie-breaker', () => {
    const command = list('sort=status,-total,placed_at:desc,notes:asc');
    expect(command.sort.map((k) => [k.field.column.name, k.descending])).toEqual([
      ['status', false],
      ['total', true],
      ['placed_at', true],
      ['notes', false],
    ]);
    expect(command.order.map((k) => k.field.column.name)).toEqual(['status', 'total', 'placed_at', 'notes', 'id']);
    expect(list('sort=-id').order.map((k) => [k.field.column.name, k.descending])).toEqual([['id', true]]);
    expect(error(() => list('sort=nope:desc')).code).toBe('UNKNOWN_COLUMN');
  });

  it('applies default_limit and clamps to max_limit', () => {
    expect(list('').limit).toBe(100);
    expect(list('limit=5&offset=10')).toMatchObject({ limit: 5, offset: 10 });
    expect(list('limit=999999').limit).toBe(1000);
    for (const bad of ['limit=-1', 'limit=1.5', 'limit=abc', 'offset=-3', 'limit=1e3', 'limit=99999999999999999999']) {
      expect(error(() => list(bad)).code).toBe('PARSE_ERROR');
    }
    expect(error(() => list('limit=1&limit=2')).code).toBe('PARSE_ERROR');
  });

  it('round-trips a cursor and rejects tampered, mismatched and offset-combined ones', () => {
    const sortOrder = list('sort=-total').order;
    const cursor = cursors.encode(orders, sortOrder, ['12.50', '7']);
    expect(list(`sort=-total&cursor=${cursor}`).cursor).toEqual({ values: ['12.50', '7'] });
    const [payload, mac] = cursor.split('.');
    const forged = `${Buffer.from(JSON.stringify(['0', '1'])).toString('base64url')}.${mac}`;
    expect(error(() => list(`sort=-total&cursor=${forged}`)).code).toBe('PARSE_ERROR');
    expect(error(() => list(`sort=total&cursor=${cursor}`)).code).toBe('PARSE_ERROR');
    expect(error(() => list(`sort=-total&cursor=${cursor}&offset=1`)).code).toBe('PARSE_ERROR');
    expect(error(() => list(`sort=-total&cursor=${payload}`)).code).toBe('PARSE_ERROR');
    const foreign = createCursorCodec(randomBytes(32)).encode(orders, sortOrder, ['12.50', '7']);
    expect(error(() => list(`sort=-total&cursor=${foreign}`)).code).toBe('PARSE_ERROR');
  });

  it('refuses a cursor on a table without a primary key', () => {
    expect(list('', auditLog).order).toEqual([]);
    expect(error(() => list('cursor=abc.def', auditLog)).code).toBe('PARSE_ERROR');
  });

  it('parses distinct and restricts select/sort to that column', () => {
    const command = list('distinct=status');
    expect(command.distinct?.name).toBe('status');
    expect(command.select.map((c) => c.name)).toEqual(['status']);
    expect(command.order.map((k) => k.field.column.name)).toEqual(['status']);
    expect(error(() => list('distinct=status&select=id')).code).toBe('PARSE_ERROR');
    expect(error(() => list('distinct=status&sort=id')).code).toBe('PARSE_ERROR');
  });

  it('parses search with all text columns or search_columns', () => {
    expect(list('search=big+order').search).toEqual({ query: 'big order', columns: [orders.columnsByName.get('status'), orders.columnsByName.get('notes')], explicitColumns: false });
    expect(list('search=x&search_columns=notes').search).toMatchObject({ columns: [orders.columnsByName.get('notes')], explicitColumns: true });
    expect(error(() => list('search_columns=notes')).code).toBe('PARSE_ERROR');
  });

  it('accepts count=exact only', () => {
    expect(list('count=exact').countExact).toBe(true);
    expect(error(() => list('count=planned')).code).toBe('PARSE_ERROR');
  });
});
