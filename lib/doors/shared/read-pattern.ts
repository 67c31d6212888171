/**
 * readPattern: a `read` command (a tree of table levels) -> its query pattern (docs/allow-list.md;
 * docs/postgrest-dialect.md, "Allow-list patterns"), e.g.
 *   GET pgrst.books select=id,title,authors!author_id(name) genre=eq order=title.desc limit
 * The method (HEAD reads as GET), the schema-qualified table, then in one canonical order: the
 * select tree (column, JSON path, casts and aggregates; embeds as the caller spelled their target,
 * with !inner and spread; no aliases), the conditions of each level sorted (`or=(a.eq,b.gt)` with
 * its items sorted, embedded levels as `rel.col=op`), order, limit, offset, count and media.
 * Values never appear; JSON path keys do (they name where the value is, like a column).
 * In: the command only. Never: reads the request.
 */
import type { Condition, Embed, FieldRef, ReadCommand, ReadNode, SelectItem } from '../../command/command';

export function readPattern(command: ReadCommand): string {
  const parts: string[] = [];
  const root = command.root;
  if (root.explicitSelect) parts.push(`select=${selectOf(root)}`);
  parts.push(...levelParts(root, ''));
  if (command.explicitLimit) parts.push('limit');
  if (command.explicitOffset) parts.push('offset');
  if (command.count) parts.push(`count=${command.count}`);
  if (command.media !== 'json') parts.push(`accept=${command.media}`);
  return ['GET', `${command.schema}.${command.table.name}`, ...parts].join(' ');
}

export function selectOf(node: ReadNode): string {
  return node.items.map(itemOf).join(',');
}

function itemOf(item: SelectItem): string {
  switch (item.kind) {
    case 'field':
      return `${fieldOf(item.field)}${item.cast ? `::${item.cast}` : ''}${item.aggregate ? `.${item.aggregate}()` : ''}${item.resultCast ? `::${item.resultCast}` : ''}`;
    case 'count':
      return `count()${item.resultCast ? `::${item.resultCast}` : ''}`;
    case 'embed':
      return embedOf(item.embed);
  }
}

function embedOf(e: Embed): string {
  return `${e.spread ? '...' : ''}${e.spelled}${e.inner ? '!inner' : ''}(${e.node.explicitSelect ? selectOf(e.node) : '*'})`;
}

function fieldOf(f: FieldRef): string {
  return f.column.name + f.path.map((s) => `${s.asText ? '->>' : '->'}${s.key}`).join('');
}

/** A level's conditions, order and paging, each prefixed with the embed path (`rel.`); then its embeds'. */
export function levelParts(node: ReadNode, prefix: string): string[] {
  const parts = [...new Set(node.where.map((c) => `${prefix}${conditionOf(c)}`))].sort();
  if (node.order.length) parts.push(`${prefix}order=${node.order.map((o) => `${o.embed ? `${o.embed.spelled}(${fieldOf(o.field)})` : o.related ? `${o.related.map((s) => s.spelled).join('.')}(${fieldOf(o.field)})` : fieldOf(o.field)}.${o.descending ? 'desc' : 'asc'}${o.nulls ? `.nulls${o.nulls}` : ''}`).join(',')}`);
  if (prefix !== '' && node.limit !== null) parts.push(`${prefix}limit`);
  if (prefix !== '' && node.offset > 0) parts.push(`${prefix}offset`);
  for (const item of node.items) if (item.kind === 'embed') parts.push(...levelParts(item.embed.node, `${prefix}${item.embed.spelled}.`));
  return parts;
}

export function conditionOf(c: Condition): string {
  const not = 'negate' in c && c.negate ? 'not.' : '';
  switch (c.kind) {
    case 'compare':
      return `${fieldOf(c.field)}=${not}${c.op}`;
    case 'quantified':
      return `${fieldOf(c.field)}=${not}${c.op}(${c.quantifier})`;
    case 'in':
      return `${fieldOf(c.field)}=${not}in`;
    case 'is':
      return `${fieldOf(c.field)}=${not}is`;
    case 'contains':
      return `${fieldOf(c.field)}=${not}contains`;
    case 'fts':
      return `${fieldOf(c.field)}=${not}${c.op}${c.config === null ? '' : '(config)'}`;
    case 'group':
      return `${not}${c.op}=(${[...new Set(c.items.map((i) => groupItemOf(i)))].sort().join(',')})`;
    case 'embedded':
      return `${c.embed.spelled}=${c.exists ? 'not.is' : 'is'}`;
  }
}

/** An item inside `or=(...)`: `col.op`, or a nested group. */
function groupItemOf(c: Condition): string {
  if (c.kind === 'group') return `${c.negate ? 'not.' : ''}${c.op}(${[...new Set(c.items.map(groupItemOf))].sort().join(',')})`;
  return conditionOf(c).replace(/^([^=]*)=/, '$1.');
}
