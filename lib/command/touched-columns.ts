/**
 * The hook the policy stage needs (docs/access-policy.md, "Columns"): naming a denied column in
 * select, a filter, sort, distinct, search_columns, expand or returning is a 403 before any SQL runs.
 * In: a command. Out: every table the command's SQL will read or write, each with every column
 * it names: returned, filtered, sorted, searched, joined on (FK and referenced key columns of an
 * expansion or a child route), written, or used as a key. Related tables appear under their own
 * Table object. Never: leaves out a table or column that compile will put in the SQL; a policy
 * that denies a table in this map can refuse the command before the database sees it.
 */
import type { Command, Condition, Embed, ListCommand, ParentScope, Search } from './command';
import { assertNever } from './command';
import { addEmbed, addReadNode, conditionColumns } from './read-columns';
import type { Column, Table } from '../schema/schema-types';

export type TouchedColumns = Map<Table, Set<Column>>;

export function touchedColumns(command: Command): TouchedColumns {
  const touched: TouchedColumns = new Map();
  const add = (table: Table, columns: Iterable<Column>): void => {
    let set = touched.get(table);
    if (!set) touched.set(table, (set = new Set()));
    for (const c of columns) set.add(c);
  };
  switch (command.kind) {
    case 'list':
      addList(add, command);
      break;
    case 'insert':
      add(command.table, [...command.columns, ...command.returning, ...(command.onConflict?.columns ?? [])]);
      if (command.answer) addReadNode(add, command.answer.node);
      break;
    case 'update':
      add(command.table, [...command.columns, ...command.returning, ...command.key.map((k) => k.column), ...(command.rows?.[0]?.key.map((k) => k.column) ?? [])]);
      if (command.answer) addReadNode(add, { ...command.answer.node, where: command.where ?? [] });
      break;
    case 'delete':
      add(command.table, [...command.returning, ...command.key.map((k) => k.column)]);
      if (command.answer) addReadNode(add, { ...command.answer.node, where: command.where ?? [] });
      break;
    // A function's body is opaque to the gateway; the RPC keys govern calls (docs/rpc.md, "Hardening").
    case 'rpc':
    case 'contracts':
      break;
    case 'read':
      addReadNode(add, command.root);
      break;
    default:
      return assertNever(command, 'command');
  }
  return touched;
}

type Add = (table: Table, columns: Iterable<Column>) => void;

function addList(add: Add, list: ListCommand): void {
  add(list.table, list.select);
  if (list.key) add(list.table, list.key.map((k) => k.column));
  if (list.aggregate?.column) add(list.table, [list.aggregate.column]);
  add(list.table, list.order.filter((k) => k.related === undefined).map((k) => k.field.column));
  for (const k of list.order) {
    const steps = k.related ?? [];
    if (steps.length === 0) continue;
    steps.forEach((step, i) => {
      const fk = step.relation.foreignKey;
      const forward = step.relation.direction === 'forward';
      add(i === 0 ? list.table : steps[i - 1]!.relation.target, forward ? fk.columns : fk.referencedColumns);
      add(step.relation.target, forward ? fk.referencedColumns : fk.columns);
    });
    add(steps[steps.length - 1]!.relation.target, [k.field.column]);
  }
  if (list.distinct) add(list.table, [list.distinct]);
  addFilters(add, list.table, list.filters, list.search);
  addExpansions(add, list.expand);
  if (list.parent) addParent(add, list.parent);
}

function addFilters(add: Add, table: Table, filters: readonly Condition[], search: Search | null): void {
  add(table, conditionColumns(filters));
  if (search) add(table, search.columns);
}

/** An expansion's level and both sides of its join; a to-many one is ordered by the target's primary key. */
function addExpansions(add: Add, expansions: readonly Embed[]): void {
  for (const e of expansions) {
    addEmbed(add, e);
    const target = e.node.table;
    if (target.primaryKey.length && e.cardinality === 'many') add(target, target.primaryKey);
  }
}

function addParent(add: Add, parent: ParentScope): void {
  add(parent.table, parent.key.map((k) => k.column));
  add(parent.foreignKey.table, parent.foreignKey.columns);
  add(parent.foreignKey.referencedTable, parent.foreignKey.referencedColumns);
}
