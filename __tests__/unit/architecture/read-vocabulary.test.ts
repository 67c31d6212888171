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
import type { Command, Condition, DeleteCommand, Embed, EmbedItem, GetCommand, Junction, OrderTerm, ParentScope, ReadCommand, ReadNode, RowScoped, UpdateCommand } from '../../../lib/command/command';
import { commandKinds, conditionCompilers, nonReadKinds, oneVocabulary } from './read-vocabulary';

const lib = path.resolve(__dirname, '../../../lib');

/** True only when A and B are the same type (each assignable to the other, not through any). */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;

// Checked by `tsc` (npm test type-checks first): each line is a type error when a field of a read
// takes a vocabulary of its own again.
const fields: readonly true[] = [
  true satisfies Same<ReadNode['where'][number], Condition>,
  true satisfies Same<NonNullable<UpdateCommand['where']>[number], Condition>,
  true satisfies Same<NonNullable<DeleteCommand['where']>[number], Condition>,
  true satisfies Same<NonNullable<RowScoped['rowFilters']>[number], Condition>,
  true satisfies Same<NonNullable<ReadNode['rowFilters']>[number], Condition>,
  true satisfies Same<NonNullable<Junction['rowFilters']>[number], Condition>,
  true satisfies Same<NonNullable<ParentScope['rowFilters']>[number], Condition>,
  true satisfies Same<ReadNode['order'][number], OrderTerm>,
  true satisfies Same<EmbedItem['embed'], Embed>,
  true satisfies Same<GetCommand['root'], ReadNode>,
  // One read kind: every command that reads rows is a ReadCommand (a second read kind is a type error here).
  true satisfies Same<Exclude<Command, { kind: 'insert' | 'update' | 'delete' | 'rpc' | 'contracts' }>, ReadCommand>,
];

describe('one read vocabulary', () => {
  it('the read fields of every command take Condition, OrderTerm and Embed (type-checked)', () => {
    expect(fields).toHaveLength(11);
  });

  it('the floor declares one condition, one ordering and one embedding type', () => {
    expect(oneVocabulary(fs.readFileSync(path.join(lib, 'command/command.ts'), 'utf8'))).toEqual([]);
  });

  // One read kind (docs/architecture.md, "One Command vocabulary"): a page, one row by key, an
  // aggregate, a plan, an export and a tree of levels are all `read` commands with capabilities.
  // A second read kind (as `list` was beside `read`) fails here.
  it('the Command union has one read kind, read', () => {
    const kinds = commandKinds(fs.readFileSync(path.join(lib, 'command/command.ts'), 'utf8'));
    expect(kinds).toEqual(expect.arrayContaining(nonReadKinds));
    expect(kinds.filter((k) => !nonReadKinds.includes(k))).toEqual(['read']);
  });

  // Policy and compile have one path for reads: no stage tests a command for a second read kind
  // (the result shapes' `list` is a shape, not a command kind; a `case` on a kind the union lacks
  // is a type error, which the test above backs).
  it('no stage tests for a read kind other than read', () => {
    const stages = path.join(lib, 'stages');
    const found = fs
      .readdirSync(stages, { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('.ts'))
      .filter((f) => /command\.kind\s*[!=]==\s*'(list|get|aggregate|explain)'/.test(fs.readFileSync(path.join(stages, f), 'utf8')));
    expect(found).toEqual([]);
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
