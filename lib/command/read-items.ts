/**
 * The items of a read level made from plain columns and embeds (the default grammar's `select` and
 * `expand`), and the columns and embeds read back from a level. The field items of a column are
 * made once per column and reused by every request (no allocation per request for them).
 */
import type { Column } from '../schema/schema-types';
import type { Embed, FieldItem, ReadNode, SelectItem } from './command';

const named = new WeakMap<Column, FieldItem>();
const starred = new WeakMap<Column, FieldItem>();
const starLists = new WeakMap<readonly Column[], readonly SelectItem[]>();

/** The field item of a column as it is (its name as the key). `fromStar`: a policy may drop it instead of refusing. */
export function columnItem(column: Column, fromStar: boolean): FieldItem {
  const cache = fromStar ? starred : named;
  let item = cache.get(column);
  if (item === undefined) {
    item = Object.freeze({ kind: 'field' as const, key: column.name, field: Object.freeze({ column, path: Object.freeze([]) }), cast: null, aggregate: null, resultCast: null, ...(fromStar ? { fromStar } : {}) });
    cache.set(column, item);
  }
  return item;
}

/** The items of columns then embeds. A default projection without embeds is one shared array per column list. */
export function columnItems(columns: readonly Column[], explicit: boolean, embeds: readonly Embed[]): readonly SelectItem[] {
  if (!explicit && embeds.length === 0) {
    let items = starLists.get(columns);
    if (items === undefined) {
      items = Object.freeze(columns.map((c) => columnItem(c, true)));
      starLists.set(columns, items);
    }
    return items;
  }
  const items: SelectItem[] = columns.map((c) => columnItem(c, !explicit));
  for (const embed of embeds) items.push({ kind: 'embed', embed });
  return Object.freeze(items);
}

/** The columns a level selects, in order (its field items' columns). */
export function selectedColumns(node: ReadNode): readonly Column[] {
  const columns: Column[] = [];
  for (const item of node.items) if (item.kind === 'field') columns.push(item.field.column);
  return columns;
}

/** Whether a level selects this column as a field. */
export function selects(node: ReadNode, column: Column): boolean {
  for (const item of node.items) if (item.kind === 'field' && item.field.column === column) return true;
  return false;
}

/** The embeds a level selects, in order. */
export function embedsOf(node: ReadNode): readonly Embed[] {
  const embeds: Embed[] = [];
  for (const item of node.items) if (item.kind === 'embed') embeds.push(item.embed);
  return embeds;
}

/** The caller's own terms of a read's order (without the tie-breakers the gateway appended). */
export function callerOrder(node: ReadNode, tieBreakers: number | undefined): ReadNode['order'] {
  return tieBreakers ? node.order.slice(0, node.order.length - tieBreakers) : node.order;
}
