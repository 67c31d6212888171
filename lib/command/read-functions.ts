/**
 * The functions a `read` command calls without being a call itself: its computed fields' and its
 * computed relationships' (docs/postgrest-dialect.md, "Computed fields", "Computed
 * relationships"), for the function allow-list.
 * In: read nodes. Out: each function with what made the read call it, in tree order, repeats
 * included. Never: leaves out one that compile puts in the SQL.
 */
import type { Condition, Embed, ReadNode } from './command';
import type { DbFunction } from '../schema/schema-types';
import { addReadNode } from './read-columns';

export interface CalledFunction {
  readonly fn: DbFunction;
  readonly as: 'computed field' | 'computed relationship';
}

export function readFunctions(...nodes: ReadNode[]): CalledFunction[] {
  const out: CalledFunction[] = [];
  for (const node of nodes) {
    addReadNode((_table, columns) => {
      for (const c of columns) if (c.computed !== undefined) out.push({ fn: c.computed.fn, as: 'computed field' });
    }, node);
    forEachEmbed(node, (e) => {
      if (e.link.kind === 'computed') out.push({ fn: e.link.relation.fn, as: 'computed relationship' });
    });
  }
  return out;
}

/** Every embed of the tree: selected, named by a condition or by an order term, at any depth. */
function forEachEmbed(node: ReadNode, f: (e: Embed) => void): void {
  const seen = new Set<Embed>();
  const visit = (e: Embed): void => {
    if (seen.has(e)) return;
    seen.add(e);
    f(e);
    walk(e.node);
  };
  const inCondition = (c: Condition): void => {
    if (c.kind === 'embedded') visit(c.embed);
    if (c.kind === 'group') c.items.forEach(inCondition);
  };
  const walk = (n: ReadNode): void => {
    for (const i of n.items) if (i.kind === 'embed') visit(i.embed);
    n.where.forEach(inCondition);
    for (const o of n.order) if (o.embed) visit(o.embed);
  };
  walk(node);
}
