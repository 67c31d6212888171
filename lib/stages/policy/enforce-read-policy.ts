/**
 * The policy applied to a `read` command (a tree of table levels), level by level, before any SQL
 * exists (docs/access-policy.md; docs/postgrest-dialect.md, "Access policy").
 * In: a permit and a read node. Out: the node, narrowed (fields that came from `*` and may not be
 * read are dropped) and with the grant's row conditions added to every level, or FORBIDDEN.
 * Never: widens the read. Every table read needs `read`: embedded tables and junction tables too,
 * so embedding a denied table is a 403, never a silent null. A column the caller names in
 * `select`, a filter (also inside `or`/`and`) or `order` must be readable.
 */
import type { Condition, Embed, OrderTerm, ReadNode, SelectItem } from '../../command/command';
import { conditionColumns } from '../../command/read-columns';
import { GatewayError } from '../../errors/gateway-error';
import type { Column, Table } from '../../schema/schema-types';
import { allows, type ColumnSet, type Operation } from './access-policy';

/** The part of enforce-policy.ts's Grant and Permit this file reads (declared here: that file imports this one). */
interface Grant {
  readonly read: ColumnSet;
  readonly rows: readonly Condition[];
}
type Permit = (table: Table, operation: Operation) => Grant;

function forbidden(message: string, details: Record<string, unknown>): GatewayError {
  return new GatewayError('FORBIDDEN', message, { details });
}

/**
 * How a read's top level is checked, beside what every level gets: the names its grammar gives
 * the projection and the ordering (for the refusal), the ordering terms the gateway appended (not
 * named by the caller, so not checked as named), and whether a level whose columns are all dropped
 * is refused even when it embeds others (a page: its rows are its columns).
 */
export interface RootChecks {
  readonly select: string;
  readonly order: string;
  readonly tieBreakers: number;
  readonly columnsRequired: boolean;
  /** The grant on the level's table, when the caller already asked the permit for it. */
  readonly grant?: Grant;
}

const levelChecks: RootChecks = Object.freeze({ select: 'select', order: 'order', tieBreakers: 0, columnsRequired: false });

export function enforceReadPolicy(permit: Permit, node: ReadNode, memo: Map<Embed, Embed> = new Map(), checks: RootChecks = levelChecks): ReadNode {
  const t = node.table;
  const grant = checks.grant ?? permit(t, 'read');
  const embed = (e: Embed): Embed => (callable(t, grant, e), enforceEmbed(permit, e, memo));
  const items: SelectItem[] = [];
  let fields = 0;
  for (const item of node.items) {
    if (item.kind === 'field') {
      if (mayRead(grant, item.field.column)) {
        items.push(item);
        fields++;
      } else if (item.fromStar !== true) denied(t, item.field.column, checks.select);
    } else if (item.kind === 'embed') items.push({ kind: 'embed', embed: embed(item.embed) });
    else items.push(item);
  }
  const noColumn = checks.columnsRequired ? fields === 0 && node.items.some((i) => i.kind === 'field') : items.length === 0 && node.items.length > 0;
  if (noColumn) throw forbidden(`The policy lets you read no column of \`${t.name}\`.`, { table: t.name });
  if (node.where.length > 0) readable(t, grant, conditionColumns(node.where), 'a filter');
  const named = node.order.length - checks.tieBreakers;
  for (let i = 0; i < named; i++) {
    const o = node.order[i]!;
    if (o.embed === null && o.related === undefined) readable(t, grant, [o.field.column], checks.order);
    else if (o.embed !== null) readable(o.embed.node.table, permit(o.embed.node.table, 'read'), [o.field.column], checks.order);
  }
  // Embeds named by a condition or an order term are checked like selected ones; `memo` keeps
  // one narrowed object per embed, so they still point at the very embed of `items` (compile joins it once).
  const where = node.where.some((c) => c.kind === 'embedded') ? node.where.map((c) => (c.kind === 'embedded' ? { ...c, embed: embed(c.embed) } : c)) : node.where;
  const order = node.order.some((o) => o.related !== undefined || o.embed !== null)
    ? node.order.map((o) => (o.related !== undefined ? relatedTerm(permit, o, checks.order) : o.embed === null ? o : { ...o, embed: embed(o.embed) }))
    : node.order;
  return Object.freeze({ ...node, items: Object.freeze(items), where, order, ...rows(node.rowFilters, grant) });
}

/**
 * A related order term (`order=rel(col)`, `sort=rel.col`): every table it passes through needs
 * `read`, the column it reads must be readable, and each step gets its table's row conditions, so
 * a related row the policy hides orders as NULL, as one RLS hides does. `where`: the parameter as
 * the caller's grammar names it, for the refusal.
 */
export function relatedTerm(permit: Permit, term: OrderTerm, where = 'order'): OrderTerm {
  const steps = term.related ?? [];
  const related = steps.map((step, i) => {
    const target = step.relation.target;
    const grant = permit(target, 'read');
    if (i === steps.length - 1) readable(target, grant, [term.field.column], where);
    return Object.freeze({ ...step, ...rows(step.rowFilters, grant) });
  });
  return Object.freeze({ ...term, related: Object.freeze(related) });
}

export function enforceEmbed(permit: Permit, e: Embed, memo: Map<Embed, Embed>): Embed {
  const known = memo.get(e);
  if (known) return known;
  let link = e.link;
  // The junction table is read too: it needs `read`, and its rows meet the grant's row conditions.
  if (link.kind === 'junction') link = Object.freeze({ kind: 'junction' as const, junction: Object.freeze({ ...link.junction, ...rows(link.junction.rowFilters, permit(link.junction.table, 'read')) }) });
  const narrowed = Object.freeze({ ...e, link, node: enforceReadPolicy(permit, e.node, memo) });
  memo.set(e, narrowed);
  return narrowed;
}

/**
 * A computed relationship runs a function on the parent row: like a computed field, the policy
 * must name it in the parent table's `read_columns` list (docs/access-policy.md); the embedded
 * table then needs `read` as any embedded table does.
 */
function callable(table: Table, grant: Grant, e: Embed): void {
  if (e.link.kind !== 'computed') return;
  const name = e.link.relation.name;
  if (grant.read.kind === 'only' && grant.read.names.has(name)) return;
  throw forbidden(`The policy does not let you embed \`${table.name}.${name}\` (a computed relationship: name it in read_columns).`, { table: table.name, relationship: name });
}

function readable(table: Table, grant: Grant, columns: readonly Column[], where: string): void {
  const bad = columns.find((c) => !mayRead(grant, c));
  if (bad) denied(table, bad, where);
}

function denied(table: Table, column: Column, where: string): never {
  throw forbidden(`The policy does not let you read \`${table.name}.${column.name}\` (in ${where}).`, { table: table.name, column: column.name, in: where.replace(/`/g, '') });
}

function rows(existing: ReadNode['rowFilters'], grant: Grant): { rowFilters?: ReadNode['rowFilters'] } {
  if (grant.rows.length === 0) return existing === undefined ? {} : { rowFilters: existing };
  return { rowFilters: Object.freeze([...(existing ?? []), ...grant.rows]) };
}

/**
 * A computed field runs a function, so the policy must name it in `read_columns` as a list; a
 * grant of all columns (or all but some) does not include it. docs/access-policy.md
 */
function mayRead(grant: Grant, column: Column): boolean {
  if (column.computed !== undefined) return grant.read.kind === 'only' && grant.read.names.has(column.name);
  return allows(grant.read, column.name);
}
