/**
 * One read vocabulary (docs/architecture.md, "One Command vocabulary"): every read of the Command
 * union says its conditions, its ordering and its embeds with the same three types of the floor
 * (`Condition`, `OrderTerm`, `Embed`), and compile turns conditions into SQL in one place. This
 * test fails when the floor or a stage grows a second vocabulary for any of them again (as the
 * flat reads' Filter, SortKey and Expansion were beside the read levels' types).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Condition, DeleteCommand, Embed, GetCommand, Junction, ListCommand, OrderTerm, ParentScope, ReadNode, RowScoped, UpdateCommand } from '../../../lib/command/command';
import { commandKinds, conditionCompilers, nonReadKinds, oneVocabulary } from './read-vocabulary';

const lib = path.resolve(__dirname, '../../../lib');

/** True only when A and B are the same type (each assignable to the other, not through any). */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;

// Checked by `tsc` (npm test type-checks first): each line is a type error when a field of a read
// takes a vocabulary of its own again.
const fields: readonly true[] = [
  true satisfies Same<ListCommand['filters'][number], Condition>,
  true satisfies Same<ReadNode['where'][number], Condition>,
  true satisfies Same<NonNullable<UpdateCommand['where']>[number], Condition>,
  true satisfies Same<NonNullable<DeleteCommand['where']>[number], Condition>,
  true satisfies Same<NonNullable<RowScoped['rowFilters']>[number], Condition>,
  true satisfies Same<NonNullable<ReadNode['rowFilters']>[number], Condition>,
  true satisfies Same<NonNullable<Junction['rowFilters']>[number], Condition>,
  true satisfies Same<NonNullable<ParentScope['rowFilters']>[number], Condition>,
  true satisfies Same<ListCommand['sort'][number], OrderTerm>,
  true satisfies Same<ListCommand['order'][number], OrderTerm>,
  true satisfies Same<ReadNode['order'][number], OrderTerm>,
  true satisfies Same<ListCommand['expand'][number], Embed>,
  true satisfies Same<GetCommand['expand'][number], Embed>,
];

describe('one read vocabulary', () => {
  it('the read fields of every command take Condition, OrderTerm and Embed (type-checked)', () => {
    expect(fields).toHaveLength(13);
  });

  it('the floor declares one condition, one ordering and one embedding type', () => {
    expect(oneVocabulary(fs.readFileSync(path.join(lib, 'command/command.ts'), 'utf8'))).toEqual([]);
  });

  // The read kinds of the Command union, one fewer with each fold (docs/architecture.md, "One
  // Command vocabulary"): `explain`, `aggregate` and `get` are lists with the `plan`, `aggregate`
  // and `key` capabilities. A read kind added, or one folded back out, fails here; the goal is one
  // read kind, `list` remains beside `read`.
  it('the Command union has no read kind beyond list and read', () => {
    const kinds = commandKinds(fs.readFileSync(path.join(lib, 'command/command.ts'), 'utf8'));
    expect(kinds).toEqual(expect.arrayContaining(nonReadKinds));
    expect(kinds.filter((k) => !nonReadKinds.includes(k)).sort()).toEqual(['list', 'read']);
  });

  it('compile turns conditions into SQL in one file, compile-condition.ts', () => {
    expect(conditionCompilers(path.join(lib, 'stages/compile'))).toEqual(['compile-condition.ts']);
  });

  it('the checks fail on a floor with a second vocabulary, and on a second condition compiler', () => {
    const second = [
      'export type Condition = { readonly kind: "compare" };',
      'export type Filter = { readonly column: Column; readonly op: FilterOp; readonly value: string };',
      'export interface SortKey { readonly column: Column; readonly descending: boolean }',
      'export interface OrderTerm { readonly field: FieldRef }',
      'export interface Expansion { readonly relation: Relation }',
      'export interface Embed { readonly key: string }',
      'export type FilterOp = "eq";',
    ].join('\n');
    expect(oneVocabulary(second)).toEqual(['conditions: Condition, Filter', 'orderings: OrderTerm, SortKey', 'embeds: Embed, Expansion']);
    expect(oneVocabulary('export type FilterOp = "eq";')).toEqual(['conditions: none', 'orderings: none', 'embeds: none']);
    const union = ["export interface ListCommand {\n  readonly kind: 'list';\n}", "export interface ExplainCommand {\n  readonly kind: 'explain';\n  readonly list: ListCommand;\n}", 'export type Command = ListCommand | ExplainCommand | Other;'].join('\n');
    expect(commandKinds(union)).toEqual(['list', 'explain', 'unknown:Other']);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tablegate-vocabulary-'));
    try {
      fs.writeFileSync(path.join(dir, 'compile-condition.ts'), "switch (c.kind) { case 'compare': return x; }\n");
      fs.writeFileSync(path.join(dir, 'compile-filter.ts'), "switch (f.op) { case 'eq': return y; }\n");
      fs.writeFileSync(path.join(dir, 'compile-list.ts'), 'export const list = 1;\n');
      expect(conditionCompilers(dir)).toEqual(['compile-condition.ts', 'compile-filter.ts']);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
