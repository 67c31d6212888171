/**
 * docs/querying.md "Limits" must list every request cap with the value the code enforces: the
 * query-string caps (lib/doors/shared/request-limits.ts, MAX_QUERY_PARAMETERS) and the JSON body
 * caps (lib/doors/shared/parse-json-body.ts). Fails when a cap changes without its documentation.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { MAX_QUERY_PARAMETERS } from '../../../lib/http/digest-request';
import { MAX_JSON_DEPTH, MAX_OBJECT_KEYS } from '../../../lib/doors/shared/parse-json-body';
import { requestLimits } from '../../../lib/doors/shared/request-limits';

const doc = readFileSync(join(__dirname, '..', '..', '..', 'docs', 'querying.md'), 'utf8');
const section = doc.slice(doc.indexOf('\n## Limits\n'));

/** Body rows of the table in the Limits section whose header starts with `first`. */
function rows(first: string): string[][] {
  const lines = section.split('\n');
  const start = lines.findIndex((l) => l.startsWith(`| ${first} |`));
  if (start < 0) throw new Error(`no table with header "${first}" in the Limits section of docs/querying.md`);
  const out: string[][] = [];
  for (let i = start + 2; i < lines.length && lines[i]!.startsWith('|'); i++) out.push(lines[i]!.split('|').slice(1, -1).map((c) => c.trim()));
  return out;
}

const number = (cell: string): number => Number(/^[\d,]+/.exec(cell)?.[0].replace(/,/g, '') ?? NaN);

describe('docs/querying.md Limits', () => {
  it('lists every query-string cap with its value', () => {
    const documented = new Map(rows('`details.limit`').map(([name, cap]) => [name!.replace(/`/g, ''), number(cap!)]));
    const expected = new Map<string, number>([
      ['query_parameters', MAX_QUERY_PARAMETERS],
      ['filters', requestLimits.filters],
      ['sort_keys', requestLimits.sortKeys],
      ['column_names', requestLimits.columnNames],
      ['column_repeats', requestLimits.columnRepeats],
      ['in_items', requestLimits.inItems],
      ['search_characters', requestLimits.searchCharacters],
      ['search_terms', requestLimits.searchTerms],
      ['expansions', requestLimits.expansions],
    ]);
    expect(Object.keys(requestLimits)).toHaveLength(expected.size - 1);
    expect(documented).toEqual(expected);
  });

  it('lists the JSON body caps with their values', () => {
    const body = new Map(rows('Cap').map(([name, value]) => [name, number(value!)]));
    expect(body.get('JSON nesting depth')).toBe(MAX_JSON_DEPTH);
    expect(body.get('keys of one JSON object')).toBe(MAX_OBJECT_KEYS);
  });
});
