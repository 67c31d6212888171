/**
 * The tables and columns a `read` command (a tree of table levels) names, level by level, for
 * touchedColumns and the policy (docs/access-policy.md, "Columns").
 * In: a read node. Out: calls `add(table, columns)` for every table the statement reads and every
 * column it names: selected, aggregated, filtered, ordered, joined on (FK columns and referenced
 * keys, junction tables). Never: leaves out a table or column that compile puts in the SQL.
 */
import type { Condition, Embed, FieldRef, ReadNode, RelatedStep } from './command';
import type { Column, Table } from '../schema/schema-types';

export type AddColumns = (table: Table, columns: Iterable<Column>) => void;

export function addReadNode(add: AddColumns, node: ReadNode): void {
  const t = node.table;
  add(t, []);
  for (const item of node.items) {
    if (item.kind === 'field') add(t, [item.field.column]);
    if (item.kind === 'embed') addEmbed(add, item.embed);
  }
  add(t, conditionColumns(node.where));
  for (const c of node.where) forEachEmbed(c, (e) => addEmbed(add, e));
  for (const o of node.order) {
    if (o.embed) {
      add(o.embed.node.table, [o.field.column]);
      addEmbed(add, o.embed);
    } else if (o.related !== undefined && o.related.length > 0) addRelated(add, t, o.related, o.field.column);
    else add(t, [o.field.column]);
  }
}

/** A related order term: both sides of each to-one hop, and the column it reads of the last table. */
function addRelated(add: AddColumns, table: Table, steps: readonly RelatedStep[], column: Column): void {
  steps.forEach((step, i) => {
    const fk = step.relation.foreignKey;
    const forward = step.relation.direction === 'forward';
    add(i === 0 ? table : steps[i - 1]!.relation.target, forward ? fk.columns : fk.referencedColumns);
    add(step.relation.target, forward ? fk.referencedColumns : fk.columns);
  });
  add(steps[steps.length - 1]!.relation.target, [column]);
}

export function addEmbed(add: AddColumns, e: Embed): void {
  if (e.link.kind === 'fk') {
    const fk = e.link.relation.foreignKey;
    add(fk.table, fk.columns);
    add(fk.referencedTable, fk.referencedColumns);
  } else if (e.link.kind === 'computed') {
    // The function is given the parent's whole row: what it reads of it is its own business.
    add(e.link.relation.source, []);
  } else {
    const { junction } = e.link;
    for (const fk of [junction.toSource, junction.toTarget]) {
      add(fk.table, fk.columns);
      add(fk.referencedTable, fk.referencedColumns);
    }
  }
  addReadNode(add, e.node);
}

/** The columns the conditions of one level compare (not those of embeds they name). */
export function conditionColumns(conditions: readonly Condition[]): Column[] {
  const out: Column[] = [];
  const walk = (c: Condition): void => {
    if (c.kind === 'group') c.items.forEach(walk);
    else if (c.kind !== 'embedded') out.push((c as { field: FieldRef }).field.column);
  };
  conditions.forEach(walk);
  return out;
}

function forEachEmbed(c: Condition, f: (e: Embed) => void): void {
  if (c.kind === 'embedded') f(c.embed);
  if (c.kind === 'group') for (const i of c.items) forEachEmbed(i, f);
}
