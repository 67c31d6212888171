/**
 * docs/errors.md must list exactly the codes of the error catalogue, each with its status, and
 * the SQLSTATE tables must match lib/errors/sqlstate-map.ts. Guards against the documentation and
 * the code drifting apart (STYLE.md, example 5).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { errorCatalogue } from '../../../lib/errors/error-catalogue';
import { classSqlstates, exactSqlstates, rulesOf, type SqlstateRow } from '../../../lib/errors/sqlstate-map';

const doc = readFileSync(join(__dirname, '..', '..', '..', 'docs', 'errors.md'), 'utf8');

/** Splits one markdown table row into trimmed cells (no leading/trailing pipe cells). */
function cells(line: string): string[] {
  return line.trim().replace(/^\|/, '').replace(/\|$/, '').split('|').map((c) => c.trim());
}

/**
 * The body rows of the one table whose header cells are exactly `header`. Fails when there is
 * no such table or more than one, so the test cannot silently check nothing.
 */
function tableRows(markdown: string, header: readonly string[]): string[][] {
  const lines = markdown.split(/\r?\n/);
  const starts = lines
    .map((line, i) => (line.trim().startsWith('|') && JSON.stringify(cells(line)) === JSON.stringify(header) ? i : -1))
    .filter((i) => i >= 0);
  if (starts.length !== 1) throw new Error(`expected exactly one table with header | ${header.join(' | ')} | in docs/errors.md, found ${starts.length}`);
  const start = starts[0]!;
  const separator = lines[start + 1] ?? '';
  if (!/^\s*\|(\s*:?-+:?\s*\|)+\s*$/.test(separator)) throw new Error(`the table | ${header.join(' | ')} | has no separator row`);
  const rows: string[][] = [];
  for (let i = start + 2; i < lines.length && lines[i]!.trim().startsWith('|'); i++) rows.push(cells(lines[i]!));
  return rows;
}

/** `` `CODE` `` -> CODE; throws for a cell that is not one backticked token. */
function backticked(cell: string, what: string): string {
  const match = /^`([^`]+)`$/.exec(cell);
  if (!match) throw new Error(`${what} cell ${JSON.stringify(cell)} is not a single backticked value`);
  return match[1]!;
}

/** Documented entries as key -> value, failing on a key listed twice. */
function entries(rows: readonly string[][], keyColumn: number, valueColumn: number, what: string): Map<string, string> {
  const map = new Map<string, string>();
  for (const row of rows) {
    const key = backticked(row[keyColumn] ?? '', what);
    if (map.has(key)) throw new Error(`docs/errors.md lists ${what} ${key} twice`);
    map.set(key, row[valueColumn] ?? '');
  }
  return map;
}

describe('docs/errors.md code table', () => {
  const documented = entries(tableRows(doc, ['Code', 'Status', 'When']), 0, 1, 'code');
  const catalogue = new Map(Object.entries(errorCatalogue).map(([code, entry]) => [code, String(entry.status)]));

  it('has a row for every catalogue code', () => {
    const missing = [...catalogue.keys()].filter((code) => !documented.has(code));
    expect(missing).toEqual([]);
  });

  it('names no code that is not in the catalogue', () => {
    const unknown = [...documented.keys()].filter((code) => !catalogue.has(code));
    expect(unknown).toEqual([]);
  });

  it('gives each code the status of the catalogue', () => {
    const wrong = [...documented]
      .filter(([code, status]) => catalogue.has(code) && catalogue.get(code) !== status)
      .map(([code, status]) => `${code}: doc ${status}, catalogue ${catalogue.get(code)}`);
    expect(wrong).toEqual([]);
  });

  it('describes when each code happens', () => {
    const rows = tableRows(doc, ['Code', 'Status', 'When']);
    expect(rows.filter((row) => (row[2] ?? '') === '').map((row) => row[0])).toEqual([]);
  });
});

describe('docs/errors.md SQLSTATE tables', () => {
  /** A row of the map may give several codes (one per cause): the Code cell lists each, backticked. */
  const codesOf = (row: SqlstateRow): string => [...new Set(rulesOf(row).map((rule) => rule.code))].sort().join(' ');
  const documentedCodes = (cell: string): string => [...new Set([...cell.matchAll(/`([A-Z_]+)`/g)].map((m) => m[1]!))].sort().join(' ');

  const check = (header: readonly string[], map: Readonly<Record<string, SqlstateRow>>, what: string): void => {
    const documented = entries(tableRows(doc, header), 0, 2, what);
    const expected = new Map(Object.entries(map).map(([sqlstate, row]) => [sqlstate, codesOf(row)]));
    expect([...expected.keys()].filter((k) => !documented.has(k))).toEqual([]);
    expect([...documented.keys()].filter((k) => !expected.has(k))).toEqual([]);
    const wrong = [...documented]
      .filter(([k, cell]) => expected.has(k) && expected.get(k) !== documentedCodes(cell))
      .map(([k, cell]) => `${k}: doc ${documentedCodes(cell)}, map ${expected.get(k)}`);
    expect(wrong).toEqual([]);
  };

  it('lists every exact SQLSTATE with the codes it maps to', () => {
    check(['SQLSTATE', 'Condition', 'Code', 'Message'], exactSqlstates, 'SQLSTATE');
  });

  it('lists every SQLSTATE class with the codes it maps to', () => {
    check(['Class', 'Condition', 'Code', 'Message'], classSqlstates, 'SQLSTATE class');
  });
});
