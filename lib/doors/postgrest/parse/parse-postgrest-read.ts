/**
 * GET / HEAD /{table} in the PostgREST dialect -> a `read` command (docs/postgrest-dialect.md,
 * "Reads"). In: the table (already resolved in the request's schema), the request, the config
 * and the schema cache. Out: a frozen ReadCommand, every name a schema-cache object.
 * Never: lets a name through unresolved, or a count past its cap (embeds, conditions, list items,
 * nesting); every malformed part is a PostgREST error (PGRST100, 103, 108, 118, 119, 123, 127,
 * 200, 201; 42703 for an unknown column; 22023 for geo+json without a geometry column), never
 * another kind of throw.
 *
 * Query parameters: `select`; `<field>=<op>.<value>` and `or` / `and` / `not.or` / `not.and`
 * per level; `order`, `limit`, `offset` per level; each prefixed with the embed path
 * (`books.title=eq.x`, `books.order=title`, `books.limit=2`) for an embedded level.
 */
import type { CastType, Condition, Embed, FieldItem, FieldRef, JsonStep, OrderTerm, ReadCommand, ReadNode, SelectItem } from '../../../command/command';
import { castTypes } from '../../../command/command';
import type { AggregateFn } from '../../../command/command';
import type { ResolvedConfig } from '../../../pipeline/resolved-config';
import { GatewayError } from '../../../errors/gateway-error';
import { columnCandidates, suggestName } from '../../../errors/name-hint';
import { PostgrestError } from '../postgrest-error';
import type { GatewayRequest } from '../../../pipeline/gateway-request';
import type { Column, SchemaCache, Table } from '../../../schema/schema-types';
import { geometryItem } from '../../../command/geometry-item';
import { geometryMissing } from '../postgrest-error';
import { parsePrefer } from '../../shared/parse-prefer';
import { findRelationship } from './find-relationship';
import { bad, parseColumnFilter, parseLogicTree, splitItems } from './parse-condition';
import { clip, parseSelect, type RawItem } from './parse-select';
import { parseAccept, parseRange } from './postgrest-headers';
import { isTimeZone } from './postgrest-prefer';

/** Caps (docs/postgrest-dialect.md, "Limits"). */
export const readLimits = Object.freeze({ embeds: 16, conditions: 100, orderTerms: 32, queryParameters: 200 });

interface Level {
  readonly table: Table;
  readonly items: (FieldItem | Extract<SelectItem, { kind: 'count' }> | { kind: 'embed'; b: EmbedBuilder })[];
  readonly where: (Condition | { kind: 'pending-embedded'; b: EmbedBuilder; exists: boolean })[];
  order: (Omit<OrderTerm, 'embed'> & { b: EmbedBuilder | null })[];
  limit: number | null;
  offset: number;
  readonly explicitSelect: boolean;
  readonly embeds: Map<string, EmbedBuilder>;
}

/** An `Embed` while its level is still being parsed: `node` is built from `level` at the end. */
interface EmbedBuilder extends Omit<Embed, 'node'> {
  readonly level: Level;
  built?: Embed;
}

export interface ReadContext {
  readonly schema: SchemaCache;
  readonly config: ResolvedConfig;
  /** The exposed schema of the request (postgrest-headers.ts). */
  readonly profile: string;
}

export function parsePostgrestRead(table: Table, request: GatewayRequest, ctx: ReadContext): ReadCommand {
  const { config } = ctx;
  const accepted = parseAccept(request.headers['accept']);
  if (request.query.length > readLimits.queryParameters) throw bad('query string', `at most ${readLimits.queryParameters} query parameters`);
  const counter = { embeds: 0, conditions: 0 };
  const selectText = request.query.find(([k]) => k === 'select')?.[1];
  if (request.query.filter(([k]) => k === 'select').length > 1) throw bad('select', 'select is given more than once');
  const root = buildLevel(table, parseSelect(selectText === undefined || selectText.trim() === '' ? '*' : selectText), ctx, counter, 0);

  let explicitLimit = false;
  let explicitOffset = false;
  for (const [key, value] of request.query) {
    if (key === 'select') continue;
    const { level, word, field } = locate(root, key);
    switch (word) {
      case 'order':
        if (level.order.length) throw bad(key, 'order is given more than once');
        level.order = parseOrder(level, value, ctx);
        break;
      case 'limit':
        level.limit = Math.min(nonNegative(key, value), config.maxLimit);
        if (level === root) explicitLimit = true;
        break;
      case 'offset':
        level.offset = nonNegative(key, value);
        if (level === root) explicitOffset = true;
        break;
      case 'or':
      case 'and':
      case 'not.or':
      case 'not.and':
        count(counter, 'conditions', readLimits.conditions);
        level.where.push(parseLogicTree(word.endsWith('or') ? 'or' : 'and', word.startsWith('not.'), value, (text) => resolveField(level.table, text, 'filter')));
        break;
      default: {
        count(counter, 'conditions', readLimits.conditions);
        // `rel=is.null` / `rel=not.is.null` on an embedded resource of this level.
        const embedded = field === undefined ? undefined : level.embeds.get(field);
        if (embedded && !field!.includes('->')) {
          const m = /^(not\.)?is\.null$/.exec(value);
          if (!m) throw bad(key, 'an embedded resource takes only is.null or not.is.null');
          level.where.push({ kind: 'pending-embedded', b: embedded, exists: m[1] !== undefined });
          break;
        }
        level.where.push(parseColumnFilter(resolveField(level.table, field!, 'filter'), value));
      }
    }
  }

  // Range header: the page when limit / offset are not given (postgrest-js sends them as parameters).
  const range = parseRange(request);
  if (range && !explicitLimit && !explicitOffset) {
    root.offset = range.offset;
    root.limit = range.limit;
    explicitOffset = range.offset > 0;
    explicitLimit = range.limit !== null;
  }
  // The top level always has a limit: at most max_limit rows (PostgREST's db-max-rows).
  root.limit = Math.min(root.limit ?? config.maxLimit, config.maxLimit);

  const prefer = parsePrefer(request.headers['prefer']);
  const countPref = prefer.get('count');
  if (countPref !== undefined && countPref !== 'exact' && countPref !== 'planned' && countPref !== 'estimated' && prefer.get('handling') === 'strict') {
    throw new PostgrestError('PGRST122', 'Invalid preferences given with handling=strict', { details: `Invalid preferences: count=${clip(countPref, 20)}` });
  }
  const timeZone = prefer.get('timezone');
  if (timeZone !== undefined && !isTimeZone(timeZone) && prefer.get('handling') === 'strict') {
    throw new PostgrestError('PGRST122', 'Invalid preferences given with handling=strict', { details: `Invalid preferences: timezone=${clip(timeZone, 40)}` });
  }
  const countMode = countPref === 'exact' || countPref === 'planned' || countPref === 'estimated' ? countPref : null;

  const finished = finish(root);
  if (accepted.media === 'geojson' && geometryItem(finished.items) === null) throw geometryMissing();
  const command: ReadCommand = {
    kind: 'read',
    table,
    root: finished,
    schema: ctx.profile,
    count: countMode,
    media: accepted.media,
    plan: accepted.plan,
    explicitLimit,
    explicitOffset,
    head: request.method === 'HEAD',
    ...(accepted.stripNulls ? { stripNulls: true } : {}),
    ...readApplied(countMode, prefer.get('handling') === 'strict', timeZone !== undefined && isTimeZone(timeZone) ? timeZone : undefined),
  };
  return Object.freeze(command);
}

function count(counter: { embeds: number; conditions: number }, what: 'embeds' | 'conditions', max: number): void {
  if (++counter[what] > max) throw bad(what, `at most ${max} ${what} in one request`);
}

function nonNegative(key: string, value: string): number {
  if (!/^\d{1,9}$/.test(value.trim())) throw bad(`${key}=${value}`, `${key} is a non-negative integer`);
  return Number(value.trim());
}

/** The level a query parameter addresses (`books.authors.name` -> the `authors` level inside `books`) and what it says there. */
function locate(root: Level, key: string): { level: Level; word: string; field: string | undefined } {
  const arrow = key.indexOf('->');
  const head = arrow < 0 ? key : key.slice(0, arrow);
  const tail = arrow < 0 ? '' : key.slice(arrow);
  const segments = head.split('.');
  let last = segments.pop()!;
  if ((last === 'or' || last === 'and') && segments[segments.length - 1] === 'not' && tail === '') {
    segments.pop();
    last = `not.${last}`;
  }
  let level = root;
  for (const s of segments) {
    const b = level.embeds.get(s);
    if (!b) throw new PostgrestError('PGRST108', `'${clip(s, 40)}' is not an embedded resource in this request`, { hint: `Verify that '${clip(s, 40)}' is included in the 'select' query parameter.` });
    level = b.level;
  }
  if (tail === '' && (last === 'order' || last === 'limit' || last === 'offset' || last === 'or' || last === 'and' || last === 'not.or' || last === 'not.and')) return { level, word: last, field: undefined };
  return { level, word: 'filter', field: last + tail };
}

function buildLevel(table: Table, raw: readonly RawItem[], ctx: ReadContext, counter: { embeds: number; conditions: number }, depth: number): Level {
  const items: Level['items'] = [];
  const embeds = new Map<string, EmbedBuilder>();
  let explicit = false;
  for (const r of raw) {
    switch (r.kind) {
      case 'star':
        for (const column of table.columns) items.push({ kind: 'field', key: column.name, field: { column, path: [] }, cast: null, aggregate: null, resultCast: null, fromStar: true });
        break;
      case 'count':
        explicit = true;
        aggregatesOn(ctx);
        items.push({ kind: 'count', key: r.alias ?? 'count', resultCast: castOf(r.resultCast) });
        break;
      case 'field': {
        explicit = true;
        const field = resolveField(table, r.name + r.path.map((s) => `${s.asText ? '->>' : '->'}${s.key}`).join(''), 'select', r.path);
        const aggregate = aggregateOf(r.aggregate);
        if (aggregate) aggregatesOn(ctx);
        const lastKey = r.path.length ? r.path[r.path.length - 1]!.key : r.name;
        items.push({ kind: 'field', key: r.alias ?? (aggregate ?? lastKey), field, cast: castOf(r.cast), aggregate, resultCast: castOf(r.resultCast) });
        break;
      }
      case 'embed': {
        explicit = true;
        count(counter, 'embeds', readLimits.embeds);
        const joinHints = r.hints.filter((h) => h === 'inner' || h === 'left');
        const fkHints = r.hints.filter((h) => h !== 'inner' && h !== 'left');
        if (fkHints.length > 1 || joinHints.length > 1) throw bad(r.name, 'an embedded resource takes at most one !hint and one of !inner / !left');
        const found = findRelationship(ctx.schema, table, r.name, fkHints[0] ?? null);
        if (r.spread && found.cardinality === 'many' && ctx.config.postgrestVersion === 12) {
          throw new PostgrestError('PGRST119', `A spread operation on '${clip(r.name, 40)}' is not possible`, { details: `'${table.name}' and '${found.target.name}' do not form a many-to-one or one-to-one relationship`, hint: 'PostgREST 12 spreads to-one relationships only (postgrest_version = 13 spreads to-many ones as arrays).' });
        }
        const key = r.alias ?? r.name;
        // A spread adds no key of its own; two returned embeds may not share one.
        if (!r.spread && [...embeds.values()].some((e) => e.key === key && !e.spread)) throw new PostgrestError('PGRST100', `"failed to parse select parameter" (two embedded resources named '${clip(key, 40)}': give one an alias)`, { details: 'duplicate embedded resource' });
        const level = buildLevel(found.target, r.items, ctx, counter, depth + 1);
        // PostgREST 13 hoists a to-one spread's aggregates to its parent; a to-many spread's are refused.
        if (r.spread && found.cardinality === 'many' && spreadAggregates(level)) {
          throw new PostgrestError('PGRST127', 'Feature not implemented', { details: 'Aggregates are not implemented for one-to-many or many-to-many spreads.' });
        }
        const b: EmbedBuilder = { key, spelled: [r.name, ...fkHints].join('!'), link: found.link, cardinality: found.cardinality, inner: joinHints[0] === 'inner', spread: r.spread, level };
        if (!embeds.has(key) || !r.spread) embeds.set(key, b);
        items.push({ kind: 'embed', b });
        break;
      }
    }
  }
  return { table, items, where: [], order: [], limit: null, offset: 0, explicitSelect: explicit, embeds };
}

/** A level's own aggregates, or those its spread embeds hoist into it. */
function spreadAggregates(level: Level): boolean {
  return level.items.some((i) => i.kind === 'count' || (i.kind === 'field' && i.aggregate !== null) || (i.kind === 'embed' && i.b.spread && spreadAggregates(i.b.level)));
}

function aggregatesOn(ctx: ReadContext): void {
  if (!ctx.config.postgrestAggregates) throw new PostgrestError('PGRST123', 'Use of aggregate functions is not allowed', { hint: 'postgrest_aggregates = false on this gateway.' });
}

function aggregateOf(name: string | null): AggregateFn | null {
  if (name === null) return null;
  if (name === 'count' || name === 'sum' || name === 'avg' || name === 'min' || name === 'max') return name;
  throw bad(name, `unknown aggregate function "${clip(name, 20)}": count, sum, avg, min, max`);
}

function castOf(name: string | null): CastType | null {
  if (name === null) return null;
  if ((castTypes as readonly string[]).includes(name)) return name as CastType;
  throw bad(`::${name}`, `casts are to one of: ${castTypes.join(', ')}`);
}

/** `name('->' key | '->>' key)*` -> a column of the table and a JSON path (only on json / jsonb columns). */
function resolveField(table: Table, text: string, where: string, rawPath?: readonly { key: string; asText: boolean }[]): FieldRef {
  let name: string;
  let path: JsonStep[];
  if (rawPath !== undefined) {
    name = text.split('->')[0]!;
    path = rawPath.map((s) => ({ key: s.key, asText: s.asText, index: /^-?\d{1,9}$/.test(s.key) }));
    name = name.trim();
  } else {
    const parts = text.split(/(->>|->)/);
    name = parts[0]!.trim().replace(/^"(.*)"$/, '$1');
    path = [];
    for (let i = 1; i < parts.length; i += 2) {
      const key = parts[i + 1]!.trim().replace(/^"(.*)"$/, '$1');
      if (key === '') throw bad(text, 'a JSON path step needs a key');
      path.push({ key, asText: parts[i] === '->>', index: /^-?\d{1,9}$/.test(key) });
    }
    if (path.length > 16) throw bad(text, 'a JSON path of more than 16 steps');
  }
  const column = columnOf(table, name);
  if (path.length > 0 && column.type !== 'json' && column.type !== 'jsonb') {
    throw bad(text, `\`${column.name}\` is ${column.type}, not json or jsonb: it has no JSON path (in ${where})`);
  }
  return { column, path };
}

function columnOf(table: Table, name: string): Column {
  const column = table.columnsByName.get(name) ?? table.computedFields?.get(name);
  if (column) return column;
  throw new GatewayError('UNKNOWN_COLUMN', `column ${table.name}.${clip(name)} does not exist`, {
    ...suggestName(name, columnCandidates(table), (near) => `Perhaps you meant to reference the column "${table.name}.${near}".`),
  });
}

/** `order=a.desc.nullslast,rel(col).asc,data->>k` at one level. */
function parseOrder(level: Level, text: string, ctx: ReadContext): Level['order'] {
  const terms = splitItems(text, text);
  if (terms.length > readLimits.orderTerms) throw bad('order', `at most ${readLimits.orderTerms} order terms`);
  return terms.map((term) => {
    const m = /^(.*?)(?:\.(asc|desc))?(?:\.(nullsfirst|nullslast))?$/s.exec(term.trim())!;
    const target = m[1]!;
    if (target === '') throw bad(term, 'expected a column to order by');
    const descending = m[2] === 'desc';
    const nulls = m[3] === undefined ? null : m[3] === 'nullsfirst' ? 'first' : 'last';
    const related = /^([^()]+)\(([^()]+)\)$/.exec(target);
    if (related) {
      const b = level.embeds.get(related[1]!.trim());
      if (!b) throw new PostgrestError('PGRST108', `'${clip(related[1]!, 40)}' is not an embedded resource in this request`, { hint: `Verify that '${clip(related[1]!, 40)}' is included in the 'select' query parameter.` });
      if (b.cardinality !== 'one') throw new PostgrestError('PGRST118', `A related order on '${clip(b.key, 40)}' is not possible`, { details: `'${level.table.name}' and '${b.level.table.name}' do not form a many-to-one or one-to-one relationship` });
      return { field: resolveField(b.level.table, related[2]!, 'order'), b, descending, nulls };
    }
    void ctx;
    return { field: resolveField(level.table, target, 'order'), b: null, descending, nulls };
  });
}

/**
 * A spread's keys join the level's own (`...products(*)` adds `id`, `name`, ...): one the level
 * already has would be a duplicate key in one JSON object, which clients read differently. 400
 * naming it (docs/postgrest-dialect.md, "Spreads"); an alias inside the spread resolves it.
 */
function checkSpreadKeys(items: readonly SelectItem[]): void {
  if (!items.some((i) => i.kind === 'embed' && i.embed.spread)) return;
  const seen = new Map<string, string>();
  const add = (key: string, from: string): void => {
    const before = seen.get(key);
    if (before !== undefined && (before !== '' || from !== '')) {
      const spread = from !== '' ? from : before;
      throw new PostgrestError('PGRST100', `"failed to parse select parameter" (the spread '...${clip(spread, 40)}' adds the key '${clip(key, 40)}', which the object already has)`, { details: 'duplicate key in a spread', hint: `Give one of them an alias, as in ...${clip(spread, 40)}(${clip(key, 40)}_2:${clip(key, 40)}).` });
    }
    seen.set(key, from);
  };
  const walk = (list: readonly SelectItem[], from: string): void => {
    for (const i of list) {
      if (i.kind !== 'embed') add(i.key, from);
      else if (i.embed.spread) walk(i.embed.node.items, from === '' ? i.embed.spelled : from);
      else add(i.embed.key, from);
    }
  };
  walk(items, '');
}

/**
 * `order=rel(col)` (PostgREST's related order, docs/postgrest-dialect.md "Order"): the column of
 * the one row of a to-one embed, as a related term (`OrderTerm.related`, the mechanism of the
 * default grammar's `sort=user.name`): the row reached by the embed's foreign key, NULL when there
 * is none or the caller cannot see it; the embed's own filters (`rel.col=eq.x`) are conditions on
 * that row, so a row they leave out orders as NULL, as PostgREST orders by the embedded value.
 * A grouped level, or an embed filtered through a deeper embed, orders by the embedded level's
 * value instead (`OrderTerm.embed`).
 */
function relatedOrder(term: Omit<OrderTerm, 'embed'>, embed: Embed, grouped: boolean): OrderTerm {
  const { link } = embed;
  if (grouped || link.kind !== 'fk' || embed.node.where.some((c) => c.kind === 'embedded')) return { ...term, embed };
  const filters = embed.node.where;
  return { ...term, embed: null, related: Object.freeze([Object.freeze({ relation: link.relation, spelled: embed.spelled, ...(filters.length > 0 ? { rowFilters: filters } : {}) })]) };
}

/** Freezes the builders into the command's nodes; one Embed object per embedded level. */
function finish(level: Level): ReadNode {
  const embedOf = (b: EmbedBuilder): Embed => (b.built ??= Object.freeze({ key: b.key, spelled: b.spelled, link: b.link, cardinality: b.cardinality, inner: b.inner, spread: b.spread, node: finish(b.level) }));
  const items: SelectItem[] = level.items.map((i) => (i.kind === 'embed' ? Object.freeze({ kind: 'embed' as const, embed: embedOf(i.b) }) : Object.freeze(i)));
  const where: Condition[] = level.where.map((c) => (c.kind === 'pending-embedded' ? Object.freeze({ kind: 'embedded' as const, embed: embedOf(c.b), exists: c.exists }) : c));
  const grouped = items.some((i) => (i.kind === 'field' && i.aggregate !== null) || i.kind === 'count');
  const order: OrderTerm[] = level.order.map(({ b, ...o }) => Object.freeze(b === null ? { ...o, embed: null } : relatedOrder(o, embedOf(b), grouped)));
  checkSpreadKeys(items);
  return Object.freeze({ table: level.table, items: Object.freeze(items), explicitSelect: level.explicitSelect, where: Object.freeze(where), order: Object.freeze(order), limit: level.limit, offset: level.offset });
}

/** A read's Preference-Applied, in PostgREST's order (count, handling, timezone); none: no key. */
function readApplied(count: string | null, strict: boolean, timeZone: string | undefined): { applied?: readonly string[] } {
  const applied = [...(count === null ? [] : [`count=${count}`]), ...(strict ? ['handling=strict'] : []), ...(timeZone === undefined ? [] : [`timezone=${timeZone}`])];
  return applied.length ? { applied: Object.freeze(applied) } : {};
}
