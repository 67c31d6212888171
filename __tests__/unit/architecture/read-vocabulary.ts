/**
 * The checks of read-vocabulary.test.ts, on source text, so the test can also run them on small
 * texts of its own with a deliberate second vocabulary.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

/** Type names of each vocabulary: a condition, an ordering, an embedded level. Operator spellings (`FilterOp`) are not types of the command. */
const vocabularies: readonly (readonly [string, RegExp])[] = [
  ['conditions', /^\w*(Filter|Condition|Predicate|Where)$/],
  ['orderings', /^\w*(Sort|SortKey|Order|OrderTerm|OrderBy|Ordering)$/],
  ['embeds', /^\w*(Expansion|Expand|Embed)$/],
];

/** Problems of a command floor's text: each vocabulary must be declared by exactly one exported type. */
export function oneVocabulary(text: string): string[] {
  const declared = [...text.matchAll(/^export\s+(?:interface|type)\s+(\w+)/gm)].map((m) => m[1]!);
  const problems: string[] = [];
  for (const [name, pattern] of vocabularies) {
    const found = declared.filter((d) => pattern.test(d)).sort();
    if (found.length !== 1) problems.push(`${name}: ${found.length === 0 ? 'none' : found.join(', ')}`);
  }
  return problems;
}

/**
 * The files of a compile folder that switch over conditions: a `case` on a condition's kind
 * (`'compare'`) or on a comparison operator (`'eq'`).
 */
export function conditionCompilers(dir: string): string[] {
  return fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.ts'))
    .filter((f) => /case '(compare|eq)'/.test(fs.readFileSync(path.join(dir, f), 'utf8')))
    .sort();
}

/**
 * The kinds of the Command union, from the floor's text: each member of `export type Command =
 * A | B | ...` and the `kind` its interface declares (`unknown:<Name>` when none is found, so a
 * member the check cannot read fails it too).
 */
export function commandKinds(text: string): string[] {
  const union = /^export type Command\s*=\s*([^;]+);/m.exec(text);
  if (!union) return [];
  return union[1]!
    .split('|')
    .map((m) => m.trim())
    .filter((m) => m !== '')
    .map((name) => {
      const body = new RegExp(`^export interface ${name}\\b[^{]*\\{([\\s\\S]*?)^\\}`, 'm').exec(text);
      const kind = body && /readonly kind: '(\w+)'/.exec(body[1]!);
      return kind ? kind[1]! : `unknown:${name}`;
    });
}

/** Kinds that are not reads: writes, calls, the contracts listing. */
export const nonReadKinds: readonly string[] = ['insert', 'update', 'delete', 'rpc', 'contracts'];
