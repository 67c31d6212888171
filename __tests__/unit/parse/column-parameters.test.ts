/**
 * `distinct` and the aggregate's `column` name one column, spelled exactly like one item of
 * `select` and `sort`: double quotes protect commas and quotes, `""` is one quote, a bare name is
 * taken as written.
 */
import { callerOrder, embedsOf, selectedColumns } from '../../../lib/command/read-items';
import { randomBytes } from 'node:crypto';
import type { ResolvedConfig } from '../../../lib/pipeline/resolved-config';
import { GatewayError } from '../../../lib/errors/gateway-error';
import { createCursorCodec } from '../../../lib/pipeline/cursor-codec';
import { parseAggregate } from '../../../lib/doors/rest/parse/parse-aggregate';
import { parseList } from '../../../lib/doors/rest/parse/parse-list';
import { makeTable, weird } from '../support/schema-fixture';
import { thrown } from '../support/thrown';

const config = { defaultLimit: 100, maxLimit: 1000 } as ResolvedConfig;
const cursors = createCursorCodec(randomBytes(32));
const commaTable = makeTable('t', [['id', 'integer'], ['a,b', 'integer'], ['"', 'text']], ['id']);

const params = (entries: Record<string, string>): [string, string][] => Object.entries(entries);
const list = (table: typeof weird, entries: Record<string, string>) => parseList(table, params(entries), config, cursors);
const aggregate = (table: typeof weird, entries: Record<string, string>) => parseAggregate(table, params(entries));
const error = (fn: () => unknown): GatewayError => thrown(fn, GatewayError);

describe('one-column parameters are quoted like select and sort', () => {
  it.each([
    ['a"b', '"a""b"'],
    ['col with space', '"col with space"'],
    ['select', '"select"'],
  ])('%s written %s: select, sort, distinct and column all resolve it', (name, quoted) => {
    const column = weird.columnsByName.get(name)!;
    expect(selectedColumns(list(weird, { select: quoted }).root)).toEqual([column]);
    expect(callerOrder(list(weird, { sort: quoted }).root, list(weird, { sort: quoted }).tieBreakers)).toEqual([{ field: { column, path: [] }, embed: null, descending: false, nulls: null }]);
    expect(list(weird, { distinct: quoted }).distinct).toBe(column);
    expect(list(weird, { distinct: quoted, select: quoted, sort: `-${quoted}` }).distinct).toBe(column);
    expect(aggregate(weird, { fn: 'max', column: quoted }).aggregate.column).toBe(column);
  });

  it('takes a bare name without quotes as written, as select does', () => {
    expect(list(weird, { distinct: 'col with space' }).distinct?.name).toBe('col with space');
    expect(aggregate(weird, { fn: 'min', column: 'naïve_ünïcode' }).aggregate.column?.name).toBe('naïve_ünïcode');
  });

  it('needs quotes around a comma or a double quote, as select does', () => {
    expect(list(commaTable, { distinct: '"a,b"' }).distinct?.name).toBe('a,b');
    expect(aggregate(commaTable, { fn: 'sum', column: '"a,b"' }).aggregate.column?.name).toBe('a,b');
    expect(list(commaTable, { distinct: '""""' }).distinct?.name).toBe('"');
    // Unquoted, a comma separates two names: one column is expected.
    const two = error(() => list(commaTable, { distinct: 'a,b' }));
    expect([two.code, two.message]).toEqual(['PARSE_ERROR', 'The `distinct` parameter names exactly one column.']);
    expect(error(() => aggregate(commaTable, { fn: 'sum', column: 'id,a' })).code).toBe('PARSE_ERROR');
    expect(error(() => list(weird, { distinct: '"a""b' })).message).toBe('Unterminated quoted item in `distinct`.');
    expect(error(() => aggregate(weird, { fn: 'max', column: '""' })).code).toBe('PARSE_ERROR');
  });

  it('reports an unknown name unquoted, with where it was found', () => {
    const unknown = error(() => aggregate(weird, { fn: 'max', column: '"a""c"' }));
    expect(unknown.code).toBe('UNKNOWN_COLUMN');
    expect(unknown.details).toEqual({ table: 'we"ird table', column: 'a"c', in: '`column`' });
    expect(error(() => list(weird, { distinct: '"nope"' })).details).toEqual({ table: 'we"ird table', column: 'nope', in: '`distinct`' });
  });
});
