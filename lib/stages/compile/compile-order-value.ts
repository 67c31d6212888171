/**
 * The value an order term orders by, over the row alias of its level: the level's own column, or,
 * for a related term (`sort=user.org.name`), a correlated scalar subquery that follows the to-one
 * foreign keys from the row to the one related row and reads the column there. One statement: the
 * subquery runs inside the read, as the caller, so RLS and a policy's row conditions on every
 * related table apply; a related row that is missing or hidden orders as NULL. Used by every
 * ORDER BY and keyset cursor condition (compile-cursor.ts, compile-read.ts).
 */
import type { Embed, OrderTerm, RelatedStep } from '../../command/command';
import type { Column } from '../../schema/schema-types';
import { ident, join, sql, type Sql } from '../../sql/sql';
import { compileCondition, fieldExpr } from './compile-condition';

const noEmbeds: ReadonlyMap<Embed, Sql> = new Map();

/** True when the term's value can be NULL although its column is NOT NULL: no related row, or a hidden one. */
export function mayBeMissing(term: OrderTerm): boolean {
  return (term.related?.length ?? 0) > 0;
}

/** The columns of the level's row an order term reads: its own column, or those its first relation starts from. */
export function orderColumns(term: OrderTerm): Column[] {
  const first = term.related?.[0];
  if (first === undefined) return [term.field.column];
  const fk = first.relation.foreignKey;
  return [...(first.relation.direction === 'forward' ? fk.columns : fk.referencedColumns)];
}

/**
 * `tag` makes the subquery's aliases unique in the statement (one per term): `_o<tag>_<step>`,
 * always qualified (docs/architecture.md, "Names the compiler writes").
 */
export function orderValue(row: Sql, term: OrderTerm, tag: string): Sql {
  const steps = term.related ?? [];
  if (steps.length === 0) return fieldExpr(term.field, row);
  const aliases = steps.map((_, i) => ident(`_o${tag}_${i}`));
  const from = join(steps.map((s, i) => sql`${ident(s.relation.target.schema, s.relation.target.name)} AS ${aliases[i]!}`));
  const conditions: Sql[] = [];
  steps.forEach((s, i) => {
    conditions.push(linked(s, i === 0 ? row : aliases[i - 1]!, aliases[i]!));
    for (const c of s.rowFilters ?? []) conditions.push(compileCondition(c, aliases[i]!, noEmbeds));
  });
  const last = aliases[aliases.length - 1]!;
  return sql`(SELECT ${fieldExpr(term.field, last)} FROM ${from} WHERE ${join(conditions, sql` AND `)})`;
}

// Forward: the source row holds the FK; reverse (one-to-one): the related row holds it. Either way
// the referenced columns are a unique key, so at most one related row matches.
function linked(step: RelatedStep, source: Sql, target: Sql): Sql {
  const fk = step.relation.foreignKey;
  const pairs: [Column, Column][] = fk.columns.map((c, i) => [c, fk.referencedColumns[i]!]);
  const forward = step.relation.direction === 'forward';
  return join(
    pairs.map(([holder, referenced]) =>
      forward ? sql`${target}.${ident(referenced.name)} = ${source}.${ident(holder.name)}` : sql`${target}.${ident(holder.name)} = ${source}.${ident(referenced.name)}`,
    ),
    sql` AND `,
  );
}
