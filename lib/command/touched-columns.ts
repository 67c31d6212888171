/**
 * The hook the policy stage needs (docs/access-policy.md, "Columns"): naming a denied column in
 * select, a filter, sort, distinct, search_columns, expand or returning is a 403 before any SQL runs.
 * In: a command. Out: every table the command's SQL will read or write, each with every column
 * it names: returned, filtered, sorted, searched, joined on (FK and referenced key columns of an
 * expansion or a child route), written, or used as a key. Related tables appear under their own
 * Table object. Never: leaves out a table or column that compile will put in the SQL; a policy
 * that denies a table in this map can refuse the command before the database sees it.
 */
import type { Command, ParentScope, ReadCommand } from './command';
import { assertNever } from './command';
import { addReadNode } from './read-columns';
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
      addRead(add, command);
      break;
    default:
      return assertNever(command, 'command');
  }
  return touched;
}

type Add = (table: Table, columns: Iterable<Column>) => void;

/** A read's levels, and what each capability it has names. */
function addRead(add: Add, read: ReadCommand): void {
  const { table, root } = read;
  addReadNode(add, root);
  if (read.key) add(table, read.key.map((k) => k.column));
  if (read.aggregate?.column) add(table, [read.aggregate.column]);
  if (read.distinct) add(table, [read.distinct]);
  if (read.search) add(table, read.search.columns);
  // A page's to-many embed is ordered by the target's primary key (compile-expand.ts).
  if (read.media === 'page') {
    for (const item of root.items) {
      if (item.kind !== 'embed') continue;
      const target = item.embed.node.table;
      if (target.primaryKey.length && item.embed.cardinality === 'many') add(target, target.primaryKey);
    }
  }
  if (read.parent) addParent(add, read.parent);
}

function addParent(add: Add, parent: ParentScope): void {
  add(parent.table, parent.key.map((k) => k.column));
  add(parent.foreignKey.table, parent.foreignKey.columns);
  add(parent.foreignKey.referencedTable, parent.foreignKey.referencedColumns);
}
