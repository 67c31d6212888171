/**
 * Names the compiler writes cannot collide with discovered names (docs/architecture.md, "Names
 * the compiler writes"). A column, table or function result column may be called `_p`, `_r`, `r`
 * or `count`: PostgreSQL resolves an unqualified name to a column before a table alias, at any
 * query level, so the compiler only ever refers to its own aliases qualified (`_p.r`, `_t."id"`)
 * or as whole rows written `alias.*`. These tests check that over every statement shape, and that
 * the collision fixture has a column for every name the compiler writes.
 */
import fs from 'node:fs';
import path from 'node:path';
import {
  compilerNames,
  compilerNamesIn,
  isSchemaName,
  representativeStatements,
  sqlTemplateWords,
  systemColumnNames,
  tokenize,
  type Token,
} from '../support/compiler-names';

const FIXTURE = path.resolve(__dirname, '../../fixtures/070-collide.sql');
const statements = representativeStatements();

/**
 * The unqualified uses of compiler-made aliases in `text`. An alias is a name the compiler defines
 * after `AS` or `WITH` (relations and output columns) or in an `AS x(a, b)` column list. A use is
 * safe only as a definition, qualified (`alias.x`, `alias.*`, `x.alias`), or as the FROM item of a
 * CTE of the same statement (`FROM _w`). Anything else is a bare name that PostgreSQL would resolve
 * to a column first (or, after FROM, to a table on the search_path).
 */
function unqualifiedAliasUses(text: string): string[] {
  const tokens = tokenize(text);
  const made = (t: Token | undefined): boolean => t !== undefined && (t.kind === 'word' || (t.kind === 'quoted' && !isSchemaName(t)));
  const defined = new Set<number>();
  tokens.forEach((t, i) => {
    const prev = tokens[i - 1]?.name;
    if (!made(t) || (prev !== 'as' && prev !== 'with')) return;
    defined.add(i);
    // `AS _e(v, n)`: the first name of each item of a column definition list.
    if (tokens[i + 1]?.name !== '(') return;
    let depth = 0;
    for (let j = i + 1; j < tokens.length; j++) {
      const name = tokens[j]!.name;
      if (name === '(') depth++;
      else if (name === ')' && --depth === 0) break;
      else if (depth === 1 && (tokens[j - 1]!.name === '(' || tokens[j - 1]!.name === ',') && made(tokens[j])) defined.add(j);
    }
  });
  const aliases = new Set([...defined].map((i) => tokens[i]!.name));
  const ctes = new Set([...defined].filter((i) => tokens[i - 1]?.name === 'with').map((i) => tokens[i]!.name));
  const uses: string[] = [];
  tokens.forEach((t, i) => {
    if (!made(t) || !aliases.has(t.name) || defined.has(i)) return;
    const prev = tokens[i - 1]?.name;
    const next = tokens[i + 1]?.name;
    if (prev === '.' || next === '.' || (prev === 'from' && ctes.has(t.name))) return;
    uses.push(
      tokens
        .slice(Math.max(0, i - 3), i + 3)
        .map((x) => (x.kind === 'quoted' ? `"${x.name}"` : x.name))
        .join(' '),
    );
  });
  return uses;
}

describe('names the compiler writes', () => {
  it('are found in the compiler source: the known aliases and output names are among them', () => {
    const words = sqlTemplateWords();
    for (const alias of ['_t', '_s', '_q', '_p', '_r', '_x', '_e', '_w', '_a', '_pa', 'a', 'r', 'v', 'n', 'json_agg', 'to_json', 'count']) {
      expect(words).toContain(alias);
    }
    expect(compilerNames()).toEqual(expect.arrayContaining(['k0', 'k1', '1', '2']));
  });

  it('the representative statements cover every route and every word of the compiler source', () => {
    const kinds = new Set(statements.map((s) => s.kind));
    expect([...kinds].sort()).toEqual(['aggregate', 'delete', 'explain', 'get', 'insert', 'list', 'read', 'rpc', 'update']);
    const used = new Set(statements.flatMap((s) => [...compilerNamesIn(s.text)]));
    const unused = [...sqlTemplateWords()].filter((w) => !used.has(w));
    // A word no statement uses is a branch no representative call reaches: add one in
    // __tests__/unit/support/compiler-names.ts (representativeCalls), so its aliases are checked below.
    expect(unused).toEqual([]);
  });

  it('never refers to one of its aliases unqualified, in any statement', () => {
    const offending = statements.map((s) => ({ statement: s.label, uses: unqualifiedAliasUses(s.text) })).filter((s) => s.uses.length > 0);
    expect(offending).toEqual([]);
  });

  it('the lint above catches the shapes that collided (json_agg(_p), SELECT _r AS r, to_json(_e))', () => {
    expect(unqualifiedAliasUses(`SELECT coalesce(json_agg(_p), '[]') FROM (SELECT _t."x" FROM "Qs"."Qt" AS _t) AS _p`)).toEqual(['( json_agg ( _p ) ,']);
    expect(unqualifiedAliasUses('SELECT json_agg(_p.r) FROM (SELECT _r AS r FROM "Qs"."Qt" AS _t CROSS JOIN LATERAL (SELECT _t."x") AS _r) AS _p')).toEqual(['from ( select _r as r']);
    expect(unqualifiedAliasUses('SELECT (SELECT to_json(_e) FROM (SELECT 1) AS _e)')).toEqual(['select to_json ( _e ) from']);
    expect(unqualifiedAliasUses(`WITH _w AS (SELECT 1) SELECT coalesce(json_agg(_p.*), '[]'), _p.r FROM _w CROSS JOIN LATERAL (SELECT _w."x") AS _p`)).toEqual([]);
    expect(unqualifiedAliasUses('SELECT _q.r FROM (SELECT 1 AS r) AS _q CROSS JOIN _q')).toEqual(['_q cross join _q']);
  });

  it('each has a column of that name in the collision fixture (__tests__/fixtures/070-collide.sql)', () => {
    const fixture = fs.readFileSync(FIXTURE, 'utf8');
    const list = /-- compiler names: begin\n([\s\S]*?)\n\s*-- compiler names: end/.exec(fixture)?.[1];
    expect(list).toBeDefined();
    const columns = new Set([...list!.matchAll(/'((?:[^']|'')*)'/g)].map((m) => m[1]!.replace(/''/g, "'")));
    const missing = compilerNames().filter((n) => !columns.has(n) && !systemColumnNames.has(n));
    // A new name: add it to the array between the "compiler names" markers of 070-collide.sql.
    expect(missing).toEqual([]);
  });
});
