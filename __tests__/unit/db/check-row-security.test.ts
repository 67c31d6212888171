import {
  checkRowSecurity,
  findRowSecurityGaps,
  formatRowSecurityWarning,
  warnAboutRowSecurity,
  type RelationAccess,
} from '../../../lib/db/check-row-security';
import type { Table } from '../../../lib/schema/schema-types';
import { makeSchema, makeTable } from '../support/schema-fixture';

function table(oid: number, name: string, kind: Table['kind'], rlsEnabled: boolean, rlsForced: boolean, schema = 'public'): Table {
  return { ...makeTable(name, [['id', 'bigint']], ['id'], schema), oid, kind, rlsEnabled, rlsForced };
}

const tables = [
  table(1, 'covered', 'r', true, true),
  table(2, 'open', 'r', false, false),
  table(3, 'unforced', 'r', true, false),
  table(4, 'parts', 'p', false, false, 'app'),
  table(5, 'snapshot', 'm', false, false),
  table(6, 'remote', 'f', false, false),
  table(7, 'definer_view', 'v', false, false),
  table(8, 'invoker_view', 'v', false, false),
  table(9, 'not_granted', 'r', false, false),
  table(10, 'we"ird table', 'r', false, false),
];

const facts = (securityInvoker = false, reachable = true): RelationAccess => ({ securityInvoker, reachable });
const access = new Map<number, RelationAccess>(tables.map((t) => [t.oid, facts()]));
access.set(8, facts(true));
access.set(9, facts(false, false));
access.delete(10);

describe('findRowSecurityGaps', () => {
  it('lists tables without RLS enabled and forced, and views without security_invoker, in cache order', () => {
    const report = findRowSecurityGaps(tables, access);
    expect(report.tables.map((f) => [f.schema, f.name, f.gap])).toEqual([
      ['public', 'open', 'not-enabled'],
      ['public', 'unforced', 'not-forced'],
      ['app', 'parts', 'not-enabled'],
      ['public', 'snapshot', 'materialized-view'],
      ['public', 'remote', 'foreign-table'],
    ]);
    expect(report.views.map((f) => [f.schema, f.name, f.gap])).toEqual([['public', 'definer_view', 'view-without-security-invoker']]);
  });

  it('skips relations the role cannot reach and relations gone since discovery', () => {
    const report = findRowSecurityGaps(tables, access);
    const names = [...report.tables, ...report.views].map((f) => f.name);
    expect(names).not.toContain('not_granted');
    expect(names).not.toContain('we"ird table');
    expect(names).not.toContain('covered');
    expect(names).not.toContain('invoker_view');
  });
});

describe('formatRowSecurityWarning', () => {
  it('is undefined when everything is covered', () => {
    expect(formatRowSecurityWarning({ tables: [], views: [] })).toBeUndefined();
  });

  it('names each relation as schema.table with what is missing, views in their own section', () => {
    const text = formatRowSecurityWarning(findRowSecurityGaps(tables, access));
    expect(text).toBe(
      [
        'tablegate: WARNING: 6 exposed relations are not covered by row-level security (enabled and forced); ' +
          'the gateway serves them anyway, and callers may see rows of other tenants through them:',
        '  tables:',
        '    public.open: RLS not enabled',
        '    public.unforced: RLS enabled but not forced (the table owner bypasses it)',
        '    app.parts: RLS not enabled',
        '    public.snapshot: materialized view; RLS cannot apply (it holds every row its owner saw at the last REFRESH)',
        '    public.remote: foreign table; RLS cannot be enabled on it',
        '  views (RLS applies only through their base tables; use security_invoker = true on PostgreSQL 15+):',
        '    public.definer_view: security_invoker not set',
      ].join('\n'),
    );
  });

  it('omits an empty section and says "relation is" for one', () => {
    const text = formatRowSecurityWarning({ tables: [], views: [{ schema: 'public', name: 'v', kind: 'v', gap: 'view-without-security-invoker' }] });
    expect(text).toMatch(/^tablegate: WARNING: 1 exposed relation is not covered/);
    expect(text).not.toContain('  tables:');
    expect(text).toContain('\n  views (RLS applies only through their base tables; use security_invoker = true on PostgreSQL 15+):\n    public.v: security_invoker not set');
  });

  it('quotes names that are not plain identifiers and escapes control characters', () => {
    const text = formatRowSecurityWarning({
      tables: [
        { schema: 'Sales', name: 'we"ird table', kind: 'r', gap: 'not-enabled' },
        { schema: 'public', name: 'line\nbreak', kind: 'r', gap: 'not-forced' },
      ],
      views: [],
    });
    expect(text).toContain('\n    "Sales"."we""ird table": RLS not enabled\n');
    expect(text).toContain('\n    public."line\\u000abreak": RLS enabled but not forced');
    expect(text!.split('\n')).toHaveLength(4);
  });
});

describe('checkRowSecurity and warnAboutRowSecurity', () => {
  let warn: jest.SpyInstance;
  beforeEach(() => {
    warn = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
  });
  afterEach(() => warn.mockRestore());

  const schema = makeSchema(tables.slice(0, 3));

  it('reads the access facts of the cached oids in one query (oids and booleans converted)', async () => {
    const calls: unknown[][] = [];
    const db = {
      query: async (text: string, values?: unknown[]) => {
        calls.push([text, values]);
        return { rows: [1, 2, 3].map((oid) => ({ oid: String(oid), security_invoker: false, reachable: true })) };
      },
    };
    const report = await checkRowSecurity(db, schema);
    expect(calls).toHaveLength(1);
    expect(calls[0]![1]).toEqual([[1, 2, 3]]);
    expect(report.tables.map((f) => f.name)).toEqual(['open', 'unforced']);
  });

  it('makes no query for an empty schema', async () => {
    const db = { query: jest.fn() };
    expect(await checkRowSecurity(db, makeSchema([]))).toEqual({ tables: [], views: [] });
    expect(db.query).not.toHaveBeenCalled();
  });

  it('logs one warning, and a failed check is a warning too, never an error', async () => {
    await warnAboutRowSecurity({ query: async () => ({ rows: [{ oid: 2, security_invoker: false, reachable: true }] }) }, schema);
    expect(warn).toHaveBeenCalledTimes(1);
    expect(warn.mock.calls[0]![0]).toMatch(/^tablegate: WARNING: 1 exposed relation is not covered[\s\S]*\n {4}public\.open: RLS not enabled$/);

    warn.mockClear();
    await expect(warnAboutRowSecurity({ query: async () => Promise.reject(new Error('connection lost')) }, schema)).resolves.toBeUndefined();
    expect(warn.mock.calls).toEqual([['tablegate: WARNING: could not check row-level security of the exposed tables: connection lost']]);
  });

  it('logs nothing when everything is covered', async () => {
    await warnAboutRowSecurity({ query: async () => ({ rows: [{ oid: 1, security_invoker: false, reachable: true }] }) }, schema);
    expect(warn).not.toHaveBeenCalled();
  });
});
