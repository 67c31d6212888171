/**
 * ReadCommand (a tree of table levels) -> one statement returning one row: the response
 * body built by PostgreSQL (a JSON array, one object, CSV text, or a GeoJSON FeatureCollection),
 * the number of rows in it, and the total when a count was asked for (docs/postgrest-dialect.md,
 * "How a read is compiled").
 * In: a read command whose tables and columns are schema-cache objects. Out: the statement.
 * Never: writes caller text into the SQL text. Output keys and JSON path keys are bound values;
 * casts come from `castTypes`; aliases are made here (`_n0`, `_e1`, `_g2`, ...). Embedded levels
 * are LATERAL subqueries of the same statement (no follow-up query), so RLS applies to them.
 */
import type { AggregateFn, CastType, Condition, Embed, FieldItem, FieldRef, ReadCommand, ReadNode, SelectItem } from '../../command/command';
import { assertNever } from '../../command/command';
import { geometryItem } from '../../command/geometry-item';
import { catalogType, empty, ident, integerLiteral, join, sql, type Sql } from '../../sql/sql';
import { GatewayError } from '../../errors/gateway-error';
import { assertComparable } from './comparison-operator';
import { compileCondition, fieldExpr, hasRows } from './compile-condition';
import { orderValue } from './compile-order-value';

/** Output columns of the read statement, by position (the plan's `read` shape). */
export const readColumns = { body: 0, count: 1, total: 2 } as const;

/** json_build_object takes at most 100 arguments: 50 key/value pairs. */
const PAIRS_PER_OBJECT = 50;

class Aliases {
  private n = 0;
  next(prefix: '_n' | '_e' | '_g' | '_j' | '_s' | '_r'): Sql {
    return ident(`${prefix}${this.n++}`);
  }
}

/**
 * `rootFrom`: what the top level reads instead of its table (a write's returned rows `_w`, a
 * function's rows), given the level's alias; its rows have the top table's columns.
 */
export function compileRead(command: ReadCommand, rootFrom?: (alias: Sql) => Sql, estimateCap = defaultEstimateCap): Sql {
  const aliases = new Aliases();
  const root = command.root;
  const level = compileLevel(root, aliases, () => [], true, rootFrom, featureOf(command), undefined, command.media === 'csv');
  const json = command.stripNulls === true ? sql`json_strip_nulls(${level.json})` : level.json;
  const page = sql`SELECT ${json} AS j${level.rest}`;
  const total = compileTotal(command, aliases, rootFrom, estimateCap);
  const body = bodyOf(command);
  return sql`SELECT ${body}, count(*)::text, ${total} FROM (${page}) AS _p`;
}

/** The response body from the page's rows `_p.j`. */
function bodyOf(command: ReadCommand): Sql {
  switch (command.media) {
    case 'json':
    case 'plan':
      return sql`coalesce(json_agg(_p.j), '[]')::text`;
    // The one row's object (rendering answers 406 unless the count is 1).
    case 'object':
      return sql`(array_agg(_p.j))[1]::text`;
    case 'csv':
      // A read's CSV (docs/postgrest-dialect.md, "CSV"): the keys joined by commas when
      // there are rows (else nothing), a line break, then each row's record text without its
      // parentheses, rows joined by line breaks. A record's text quotes a value that is empty or
      // holds a comma, quote, backslash, parenthesis or white space, doubling quotes and
      // backslashes; NULL is an empty field; values are in their types' text form (`t`, `{a,b}`).
      // The keys are one bound value.
      return sql`CASE WHEN count(*) = 0 THEN '' ELSE ${csvHeader(command.root)}::text END || E'\\n' || coalesce(string_agg(substring(_p.j::text, 2, length(_p.j::text) - 2), E'\\n'), '')`;
    case 'geojson':
      // Each `_p.j` is a Feature (compileLevel with `feature`): a GeoJSON FeatureCollection.
      return sql`json_build_object('type', 'FeatureCollection', 'features', coalesce(json_agg(_p.j), '[]'))::text`;
    case 'page':
      // A page is compiled by compile-list.ts (create-compile-stage.ts picks it), never here.
      throw new Error('a page read reached the tree compiler');
    default:
      return assertNever(command.media, 'media');
  }
}

/** The CSV header: the top level's keys (a spread embed's keys in its place), joined by commas, unquoted. */
function csvHeader(node: ReadNode): string {
  return levelEntries(node.items, () => empty, new Map(), 'keys').map((e) => e.key).join(',');
}

/**
 * One key of a spread embed's JSON: as JSON in a row object; in a CSV row as its text (a
 * string without JSON quotes, a number as written), standing for the related row's column in
 * the row (docs/postgrest-dialect.md, "What differs": booleans and timestamps there).
 */
function spreadValue(json: Sql, key: string, asText: boolean): Sql {
  return asText ? sql`${json} ->> ${key}::text` : sql`${json} -> ${key}::text`;
}

/**
 * geo+json: which top-level item is each row's geometry, and the PostGIS function that renders it,
 * named in the schema of the column's type (parse found both in the schema cache).
 */
interface Feature {
  readonly index: number;
  readonly asGeoJson: Sql;
}

function featureOf(command: ReadCommand): Feature | undefined {
  if (command.media !== 'geojson') return undefined;
  // Found again here, after the policy: it may have dropped a `*` column (the geometry too).
  const found = geometryItem(command.root.items);
  if (found === null) throw noGeometry();
  return { index: found.index, asGeoJson: ident(found.postgisSchema, 'st_asgeojson') };
}

/**
 * GeoJSON asked for and no selected top-level column is a geometry or geography: the error
 * PostGIS's ST_AsGeoJSON(record) raises (22023), raised here before any SQL.
 */
function noGeometry(): GatewayError {
  return new GatewayError('PARSE_ERROR', 'geometry column is missing', {
    details: { sqlstate: '22023', detail: 'application/geo+json needs a selected top-level column of type geometry or geography (PostGIS).' },
  });
}

/**
 * A row as a GeoJSON Feature, as PostGIS's ST_AsGeoJSON(record) makes it: the geometry at 9
 * decimal digits without bbox or crs (options 0), the other keys as `properties`. Built with
 * json_build_object rather than from a record, whose column names would be the caller's aliases.
 * A NULL geometry is `"geometry": null` (RFC 7946's unlocated Feature).
 */
function featureJson(feature: Feature, geometry: Sql, properties: Sql): Sql {
  return sql`json_build_object('type', 'Feature', 'geometry', ${feature.asGeoJson}(${geometry}, 9, 0)::json, 'properties', ${properties})`;
}

/**
 * `Prefer: count=exact`: count(*) of the filtered top level without its limit. `planned`: nothing
 * here (execute fills in the planner's estimate of `compileCountedRows`, run as the caller).
 * `estimated`: the exact count up to `cap` (max_limit) plus one; execute
 * replaces a count above the cap with the larger of it and the estimate (docs/postgrest-dialect.md,
 * "Counts"). Never the table's own statistics (pg_class.reltuples): they count every tenant's rows.
 */
function compileTotal(command: ReadCommand, aliases: Aliases, rootFrom: ((alias: Sql) => Sql) | undefined, cap: number): Sql {
  if (command.count === null || command.count === 'planned') return sql`NULL::text`;
  const rows = countedRows(command, aliases, rootFrom);
  if (command.count === 'exact') return sql`(SELECT count(*) FROM (${rows}) AS _c)::text`;
  return sql`(SELECT count(*) FROM (${rows} LIMIT ${integerLiteral(cap + 1)}) AS _c)::text`;
}

/** The cap of `count=estimated` when the caller gives none (the default max_limit). */
export const defaultEstimateCap = 1000;

/** The rows a count counts: the filtered top level, without order or page. */
function countedRows(command: ReadCommand, aliases: Aliases, rootFrom: ((alias: Sql) => Sql) | undefined): Sql {
  const root = command.root;
  // `!inner` embeds filter the rows counted; other embeds do not, and are left out.
  // Rows, not groups: a to-one spread's aggregates are not hoisted here (a map to hoist them into).
  const counted = compileLevel({ ...root, items: root.items.filter((i) => i.kind === 'embed' && i.embed.inner), order: [], limit: null, offset: 0 }, aliases, () => [], false, rootFrom, undefined, new Map());
  return sql`SELECT 1${counted.rest}`;
}

/**
 * `count=planned|estimated`: EXPLAIN of the rows counted, with the same filters and the same
 * source, so that the planner's row estimate is of the caller's statement under its row-level
 * security (docs/security.md, "Counts and estimates").
 */
export function compileCountEstimate(command: ReadCommand, rootFrom?: (alias: Sql) => Sql): Sql {
  return sql`EXPLAIN (FORMAT JSON) ${countedRows(command, new Aliases(), rootFrom)}`;
}

interface LevelSql {
  /** The level's table alias. */
  readonly alias: Sql;
  /** The row's JSON value (an object; for a grouped level, built from `_g` and aggregates). */
  readonly json: Sql;
  /** Everything after the select list: FROM ... WHERE ... GROUP BY ... ORDER BY ... LIMIT ... */
  readonly rest: Sql;
}

/**
 * One level: `FROM <table> AS _nX [LEFT JOIN LATERAL <embed> ...] WHERE <conditions>`, then
 * ordered and paged. `correlation` are the conditions tying it to the level above (none at the top).
 * A level with aggregates reads its fields from a derived table `_g` and groups by the others:
 * GROUP BY names `_g` columns, never expressions with bound values, which PostgreSQL could not
 * match to the select list's.
 */
function compileLevel(node: ReadNode, aliases: Aliases, correlation: (a: Sql) => Sql[], top: boolean, source?: (alias: Sql) => Sql, feature?: Feature, hoistUp?: Map<Embed, Hoisted>, asRecord = false): LevelSql {
  const a = aliases.next('_n');
  const t = node.table;
  const embeds = node.items.filter((i): i is Extract<SelectItem, { kind: 'embed' }> => i.kind === 'embed').map((i) => i.embed);
  // Embeds named only by a condition (`rel=not.is.null`) or an order term are joined too.
  for (const c of node.where) collectEmbeds(c, embeds);
  for (const o of node.order) if (o.embed && !embeds.includes(o.embed)) embeds.push(o.embed);
  const joined = new Map<Embed, Sql>();
  const joins: Sql[] = [];
  // To-one spreads' aggregates, computed at this level (or, given `hoistUp`, at the one above).
  const hoisted = hoistUp ?? new Map<Embed, Hoisted>();
  for (const e of embeds) {
    const alias = aliases.next('_e');
    joined.set(e, alias);
    const orderFields = node.order.filter((o) => o.embed === e).map((o) => o.field);
    const embedded = compileEmbed(e, a, aliases, orderFields);
    if (embedded.entries !== null) hoisted.set(e, { alias, entries: embedded.entries });
    joins.push(sql` LEFT JOIN LATERAL (${embedded.body}) AS ${alias} ON true`);
  }
  const conditions = [...correlation(a), ...node.where.map((c) => compileCondition(c, a, joined)), ...(node.rowFilters ?? []).map((c) => compileCondition(c, a, joined))];
  for (const e of embeds) if (e.inner) conditions.push(hasRows(e, joined.get(e)!));
  // A level of plain columns under their own names is rendered from a record of them: to_json of a
  // row costs PostgreSQL about a quarter less than json_build_object with one key per column
  // (docs/performance.md, "Rows as records"), and its text is compact
  // (`{"id":1}`). The names are the schema's column names, never caller text.
  const record = feature === undefined && !asRecord && plainColumns(node.items) ? aliases.next('_r') : null;
  if (record !== null) {
    const columns = node.items.map((i) => sql`${a}.${ident((i as FieldItem).field.column.name)}`);
    joins.push(sql` CROSS JOIN LATERAL (SELECT ${join(columns)}) AS ${record}`);
  }
  const where = conditions.length ? sql` WHERE ${join(conditions, sql` AND `)}` : empty;
  // The rows this level reads: its table, or at the top what `rootFrom` names (a write's rows).
  const rows = source ? source(a) : sql`${ident(t.schema, t.name)} AS ${a}`;
  const from = sql` FROM ${rows}${join(joins, empty)}${where}`;
  const page = pageOf(node, top);

  const orderTerms = node.order.map((o, k) => {
    // ORDER BY finds the type's btree class by type; a type without one is refused (400).
    if (!o.embed && o.field.path.length === 0) assertComparable(o.field.column, 'ordering', 'order');
    // A related term (`order=rel(col)`): the related row's column, read where the list's is (compile-order-value.ts).
    const expr = o.embed ? sql`${joined.get(o.embed)!}.${ident(`o${embedOrderIndex(node, o)}`)}` : orderValue(a, o, `r${k}`);
    return { expr, o };
  });
  const grouped = node.items.some((i) => aggregated(i) || (hoistUp === undefined && i.kind === 'embed' && hoisted.has(i.embed)));
  if (!grouped) {
    const orderBy = orderTerms.length ? sql` ORDER BY ${join(orderTerms.map(({ expr, o }) => orderSql(expr, o.descending, o.nulls)))}` : empty;
    const entries = () => levelEntries(feature ? node.items.filter((_, i) => i !== feature.index) : node.items, (i) => valueOf(i, a, aliases), joined, asRecord ? 'record' : 'json');
    // A CSV row is the record of the values in their own types (csvHeader, bodyOf).
    const properties = asRecord ? recordOf(entries()) : record !== null ? sql`to_json(${record}.*)` : objectOf(entries());
    const geometryItem = feature ? node.items[feature.index] : undefined;
    const json = feature && geometryItem?.kind === 'field' ? featureJson(feature, valueOf(geometryItem, a, aliases), properties) : properties;
    // The page first, then its rows' embeds: when no condition or ordering reads an embed, the
    // top level is limited in a derived table of the same alias and only the page's rows get
    // their related rows (else every matching row's would be built before the sort and limit).
    const inWhere: Embed[] = [];
    for (const c of node.where) collectEmbeds(c, inWhere);
    const pageFirst = top && embeds.length > 0 && inWhere.length === 0 && embeds.every((e) => !e.inner) && node.order.every((o) => o.embed === null);
    if (pageFirst) {
      const own = [...correlation(a), ...node.where.map((c) => compileCondition(c, a, joined)), ...(node.rowFilters ?? []).map((c) => compileCondition(c, a, joined))];
      const ownWhere = own.length ? sql` WHERE ${join(own, sql` AND `)}` : empty;
      const limited = sql`SELECT ${a}.* FROM ${rows}${ownWhere}${orderBy}${page}`;
      return { alias: a, json, rest: sql` FROM (${limited}) AS ${a}${join(joins, empty)}${orderBy}` };
    }
    return { alias: a, json, rest: sql`${from}${orderBy}${page}` };
  }
  // Grouped: the fields (cast, not yet aggregated) and the ordering values as `_g` columns.
  const g = aliases.next('_g');
  const inner: Sql[] = [];
  const pairs: Entry[] = [];
  const groupBy: Sql[] = [];
  let geometry: Sql | null = null;
  node.items.forEach((item, i) => {
    const col = ident(`c${i}`);
    if (item.kind === 'count') {
      pairs.push({ key: item.key, value: castTo(sql`count(*)`, item.resultCast) });
      return;
    }
    if (item.kind === 'embed') {
      // Grouped by the embedded value itself (as jsonb: json has no equality).
      const e = item.embed;
      const spreadAggs = hoisted.get(e);
      inner.push(sql`${joined.get(e)!}.j::jsonb AS ${col}`);
      // A spread of aggregates only adds no group: no rows still aggregate to one row.
      if (!spreadAggs?.entries.every((entry) => entry.agg !== null)) groupBy.push(sql`${g}.${col}`);
      if (e.node.items.length === 0) return;
      if (!e.spread) pairs.push({ key: e.key, value: sql`${g}.${col}` });
      else if (spreadAggs) {
        // Hoisted aggregates of a to-one spread: over this level's rows, grouped as they are.
        spreadAggs.entries.forEach((entry, n) => {
          if (entry.agg === null) return pairs.push({ key: entry.key, value: spreadValue(sql`${g}.${col}`, entry.key, asRecord) });
          const h = ident(`c${i}_${n}`);
          inner.push(sql`${spreadAggs.alias}.${ident(entry.agg.column)} AS ${h}`);
          pairs.push({ key: entry.key, value: castTo(sql`${aggregateSql(entry.agg.fn)}(${g}.${h})`, entry.agg.resultCast) });
        });
      } else for (const k of spreadKeys(e.node)) pairs.push({ key: k, value: spreadValue(sql`${g}.${col}`, k, asRecord) });
      return;
    }
    inner.push(sql`${castTo(fieldExpr(item.field, a), item.cast)} AS ${col}`);
    if (item.aggregate === null) {
      groupBy.push(sql`${g}.${col}`);
      if (feature?.index === i) geometry = sql`${g}.${col}`;
      else pairs.push({ key: item.key, value: sql`${g}.${col}` });
    } else {
      pairs.push({ key: item.key, value: castTo(sql`${aggregateSql(item.aggregate)}(${g}.${col})`, item.resultCast) });
    }
  });
  orderTerms.forEach(({ expr }, i) => {
    inner.push(sql`${expr} AS ${ident(`o${i}`)}`);
    groupBy.push(sql`${g}.${ident(`o${i}`)}`);
  });
  if (inner.length === 0) inner.push(sql`1 AS c`);
  const orderBy = orderTerms.length ? sql` ORDER BY ${join(orderTerms.map(({ o }, i) => orderSql(sql`${g}.${ident(`o${i}`)}`, o.descending, o.nulls)))}` : empty;
  const group = groupBy.length ? sql` GROUP BY ${join(groupBy)}` : empty;
  const json = asRecord ? recordOf(pairs) : feature && geometry ? featureJson(feature, geometry, objectOf(pairs)) : objectOf(pairs);
  return { alias: a, json, rest: sql` FROM (SELECT ${join(inner)}${from}) AS ${g}${group}${orderBy}${page}` };
}

/**
 * Every item a column of the level's table, as stored, under the column's own name (no cast, path
 * or aggregate). Not a computed field: `_n0.fn` would find the function by the search_path only.
 */
function plainColumns(items: readonly SelectItem[]): boolean {
  if (items.length === 0) return false;
  for (const i of items) {
    if (i.kind !== 'field' || i.aggregate !== null || i.cast !== null || i.field.path.length !== 0 || i.key !== i.field.column.name || i.field.column.computed !== undefined) return false;
  }
  return true;
}

function embedOrderIndex(node: ReadNode, term: ReadNode['order'][number]): number {
  return node.order.filter((o) => o.embed === term.embed).indexOf(term);
}

function pageOf(node: ReadNode, top: boolean): Sql {
  const limit = node.limit === null ? empty : sql` LIMIT ${integerLiteral(node.limit)}`;
  const offset = node.offset > 0 || top ? sql` OFFSET ${integerLiteral(node.offset)}` : empty;
  return sql`${limit}${offset}`;
}

function collectEmbeds(c: Condition, into: Embed[]): void {
  if (c.kind === 'embedded' && !into.includes(c.embed)) into.push(c.embed);
  if (c.kind === 'group') for (const i of c.items) collectEmbeds(i, into);
}

function orderSql(expr: Sql, descending: boolean, nulls: 'first' | 'last' | null): Sql {
  const dir = descending ? sql` DESC` : sql` ASC`;
  const n = nulls === null ? empty : nulls === 'first' ? sql` NULLS FIRST` : sql` NULLS LAST`;
  return sql`${expr}${dir}${n}`;
}

/**
 * A to-one spread's keys in order; an aggregated one (`...rel(col.sum())`, `...rel(count())`,
 * or one a spread inside it hoists) names the column `hN` of the embed's subquery holding the
 * value to aggregate, which the level above aggregates over its own rows, grouped as it groups
 * (docs/postgrest-dialect.md, "Aggregates").
 */
interface SpreadEntry {
  readonly key: string;
  readonly agg: { readonly fn: AggregateFn; readonly resultCast: CastType | null; readonly column: string } | null;
}

interface Hoisted {
  /** The embed's alias in the level above. */
  readonly alias: Sql;
  readonly entries: readonly SpreadEntry[];
}

function aggregated(i: SelectItem): boolean {
  return i.kind === 'count' || (i.kind === 'field' && i.aggregate !== null);
}

/** A to-one spread with aggregates of its own or in to-one spreads inside it. */
function hoists(e: Embed): boolean {
  return e.spread && e.cardinality === 'one' && e.node.items.some((i) => aggregated(i) || (i.kind === 'embed' && hoists(i.embed)));
}

function aggregateSql(fn: AggregateFn): Sql {
  return fn === 'count' ? sql`count` : fn === 'sum' ? sql`sum` : fn === 'avg' ? sql`avg` : fn === 'min' ? sql`min` : sql`max`;
}

/**
 * An embedded level as the body of a LATERAL subquery: its JSON as `j` (plus ordering values
 * `o0...` of a to-one level, and the values `h0...` of a to-one spread's hoisted aggregates,
 * with `entries` naming them; null for any other embed).
 */
function compileEmbed(e: Embed, parent: Sql, aliases: Aliases, orderFields: readonly FieldRef[]): { body: Sql; entries: SpreadEntry[] | null } {
  const correlation = (a: Sql): Sql[] => correlate(e, a, parent, aliases);
  const from = computedFrom(e, parent);
  if (hoists(e)) return compileHoistingSpread(e, aliases, correlation, orderFields, from);
  const level = compileLevel(e.node, aliases, correlation, false, from);
  const s = aliases.next('_s');
  if (e.cardinality === 'one') {
    // LIMIT 1: a to-one relation whose uniqueness is not enforced must still render one object.
    // The parent orders by `o0`, `o1`, ...: fields of this one row (`order=rel(col)`).
    const extra = orderFields.map((f, i) => sql`, ${fieldExpr(f, level.alias)} AS ${ident(`o${i}`)}`);
    return { body: sql`SELECT ${level.json} AS j${join(extra, empty)}${level.rest} LIMIT 1`, entries: null };
  }
  if (e.spread) {
    // A spread to-many level: each of its fields becomes an array of values.
    const keys = spreadKeys(e.node);
    const entries = keys.map((key) => ({ key, value: sql`coalesce(json_agg(${s}.j -> ${key}::text), '[]')` }));
    // `n` counts the related rows: the object of arrays exists even without any (`!inner` and
    // `rel=not.is.null` test `n`, see hasRows).
    return { body: sql`SELECT ${objectOf(entries)} AS j, count(*) AS n FROM (SELECT ${level.json} AS j${level.rest}) AS ${s}`, entries: null };
  }
  return { body: sql`SELECT coalesce(json_agg(${s}.j), '[]') AS j FROM (SELECT ${level.json} AS j${level.rest}) AS ${s}`, entries: null };
}

/**
 * A to-one spread with aggregates: its row without them as `j`, and each value to aggregate as
 * `hN` (`count()`: `true`, NULL without a related row, so that only rows with one count).
 */
function compileHoistingSpread(e: Embed, aliases: Aliases, correlation: (a: Sql) => Sql[], orderFields: readonly FieldRef[], from: ((alias: Sql) => Sql) | undefined): { body: Sql; entries: SpreadEntry[] } {
  const inside = new Map<Embed, Hoisted>();
  const level = compileLevel({ ...e.node, items: e.node.items.filter((i) => !aggregated(i)) }, aliases, correlation, false, from, undefined, inside);
  const entries: SpreadEntry[] = [];
  const values: Sql[] = [];
  const hoist = (key: string, fn: AggregateFn, resultCast: CastType | null, value: Sql): void => {
    const column = `h${values.length}`;
    values.push(sql`, ${value} AS ${ident(column)}`);
    entries.push({ key, agg: { fn, resultCast, column } });
  };
  for (const item of e.node.items) {
    if (item.kind === 'count') hoist(item.key, 'count', item.resultCast, sql`true`);
    else if (item.kind === 'field') {
      if (item.aggregate === null) entries.push({ key: item.key, agg: null });
      else hoist(item.key, item.aggregate, item.resultCast, castTo(fieldExpr(item.field, level.alias), item.cast));
    } else if (!item.embed.spread) entries.push({ key: item.embed.key, agg: null });
    else {
      const below = inside.get(item.embed);
      if (!below) for (const key of spreadKeys(item.embed.node)) entries.push({ key, agg: null });
      else for (const entry of below.entries) {
        if (entry.agg === null) entries.push(entry);
        else hoist(entry.key, entry.agg.fn, entry.agg.resultCast, sql`${below.alias}.${ident(entry.agg.column)}`);
      }
    }
  }
  const extra = orderFields.map((f, i) => sql`, ${fieldExpr(f, level.alias)} AS ${ident(`o${i}`)}`);
  return { body: sql`SELECT ${level.json} AS j${join(extra, empty)}${join(values, empty)}${level.rest} LIMIT 1`, entries };
}

/**
 * A computed relationship's rows: its function called with the parent's row (docs/postgrest-dialect.md,
 * "Computed relationships"), cast to the source table's row type, as the parent may be a derived
 * table (a page, a write's or a call's rows) whose row is an anonymous record of the same columns.
 */
function computedFrom(e: Embed, parent: Sql): ((alias: Sql) => Sql) | undefined {
  if (e.link.kind !== 'computed') return undefined;
  const { fn, source } = e.link.relation;
  // The whole parent row is `parent.*`: a bare alias would be a column of that name first.
  return (a) => sql`${ident(fn.schema, fn.name)}((${parent}.*)::${ident(source.schema, source.name)}) AS ${a}`;
}

/** The conditions tying an embedded level (alias `a`) to its parent row (alias `parent`); none for a computed relationship (its function does). */
function correlate(e: Embed, a: Sql, parent: Sql, aliases: Aliases): Sql[] {
  const link = e.link;
  if (link.kind === 'computed') return [];
  if (link.kind === 'fk') {
    const { relation } = link;
    const fk = relation.foreignKey;
    const [mine, theirs] = relation.direction === 'forward' ? [fk.columns, fk.referencedColumns] : [fk.referencedColumns, fk.columns];
    return mine.map((column, i) => sql`${a}.${ident(theirs[i]!.name)} = ${parent}.${ident(column.name)}`);
  }
  const { junction } = link;
  const j = aliases.next('_j');
  const toTarget = junction.toTarget.columns.map((c, i) => sql`${j}.${ident(c.name)} = ${a}.${ident(junction.toTarget.referencedColumns[i]!.name)}`);
  const toSource = junction.toSource.columns.map((c, i) => sql`${j}.${ident(c.name)} = ${parent}.${ident(junction.toSource.referencedColumns[i]!.name)}`);
  const policy = (junction.rowFilters ?? []).map((c) => compileCondition(c, j, new Map()));
  return [sql`EXISTS (SELECT 1 FROM ${ident(junction.table.schema, junction.table.name)} AS ${j} WHERE ${join([...toTarget, ...toSource, ...policy], sql` AND `)})`];
}

/** The keys a spread level adds to its parent row: its fields, its embeds, and its own spreads' keys. */
export function spreadKeys(node: ReadNode): string[] {
  const keys: string[] = [];
  for (const i of node.items) {
    if (i.kind === 'embed') {
      if (i.embed.spread) keys.push(...spreadKeys(i.embed.node));
      else keys.push(i.embed.key);
    } else keys.push(i.key);
  }
  return keys;
}

/** One key of a row object and its value. */
interface Entry {
  readonly key: string;
  readonly value: Sql;
}

/**
 * The keys and values of a level's row object; a spread embed contributes each of its keys.
 * `rel()` (no items: joined for `!inner` or a filter) contributes none.
 */
function levelEntries(items: readonly SelectItem[], value: (i: FieldItem) => Sql, joined: ReadonlyMap<Embed, Sql>, use: 'json' | 'record' | 'keys' = 'json'): Entry[] {
  const keysOnly = use === 'keys';
  const entries: Entry[] = [];
  for (const item of items) {
    switch (item.kind) {
      case 'field':
        entries.push({ key: item.key, value: value(item) });
        break;
      case 'count':
        // Only in grouped levels (compileLevel's other branch); its key for the CSV header.
        if (!keysOnly) throw new Error('count() outside a grouped level');
        entries.push({ key: item.key, value: empty });
        break;
      case 'embed': {
        if (item.embed.node.items.length === 0) break;
        const alias = keysOnly ? empty : joined.get(item.embed)!;
        if (!item.embed.spread) entries.push({ key: item.embed.key, value: sql`${alias}.j` });
        else for (const k of spreadKeys(item.embed.node)) entries.push({ key: k, value: spreadValue(sql`${alias}.j`, k, use === 'record') });
        break;
      }
      default:
        assertNever(item, 'select item');
    }
  }
  return entries;
}

function valueOf(item: FieldItem, a: Sql, aliases: Aliases): Sql {
  return castTo(fieldExpr(item.field, a), item.cast);
}

/** A record of the entries' values, in order: a CSV row (its text, without the parentheses, is the CSV line). */
function recordOf(entries: readonly Entry[]): Sql {
  return sql`ROW(${join(entries.map((e) => e.value))})`;
}

/**
 * json_build_object of the entries. Above 50, objects of 50 spliced as text: each one's `{...}`
 * without the brace it shares with its neighbour, joined by `, `, read back as json. The keys stay
 * in the select's order (merging as jsonb would sort them and drop duplicates).
 */
function objectOf(entries: readonly Entry[]): Sql {
  const pairs = entries.map((e) => sql`${e.key}::text, ${e.value}`);
  if (pairs.length <= PAIRS_PER_OBJECT) return sql`json_build_object(${join(pairs)})`;
  const chunks: Sql[] = [];
  for (let i = 0; i < pairs.length; i += PAIRS_PER_OBJECT) {
    const text = sql`json_build_object(${join(pairs.slice(i, i + PAIRS_PER_OBJECT))})::text`;
    const first = i === 0;
    const last = i + PAIRS_PER_OBJECT >= pairs.length;
    chunks.push(first ? sql`left(${text}, -1)` : last ? sql`substr(${text}, 2)` : sql`substr(left(${text}, -1), 2)`);
  }
  return sql`(${join(chunks, sql` || ', ' || `)})::json`;
}

function castTo(value: Sql, cast: string | null): Sql {
  return cast === null ? value : sql`(${value})::${catalogType(cast)}`;
}
