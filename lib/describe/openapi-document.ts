/**
 * The OpenAPI 3.1 document of the API one caller sees (docs/openapi.md).
 *
 * In: the schema cache, what the caller may do (`CallerAccess`, built by create-gateway.ts from the
 * policies), which functions it may call, a few configuration values and the URL the router is
 * mounted at. Out: a plain JSON-ready object. Pure: no I/O, no policy or stage code; the same
 * input gives the same document. Never: names a table the caller may not read or a column it may
 * not read, nor a function it may not call.
 *
 * Value types come from lib/describe/json-schema-of-type.ts, the mapping `tablegate gen types`
 * uses too. Routes and parameters follow docs/querying.md, docs/writing.md, docs/relations.md and
 * docs/rpc.md; error responses follow the catalogue (lib/errors/error-catalogue.ts).
 */
import { errorCatalogue, type ErrorCode } from '../errors/error-catalogue';
import { relationsOf } from '../schema/relations';
import type { Column, DbFunction, PgType, SchemaCache, Table } from '../schema/schema-types';
import type { DescribedGrammar } from '../pipeline/door';
import type { CallerAccess } from './caller-access';
import { describedFunctions, describedTables, enumNames, type DescribedTable } from './described-schema';
import { jsonSchemaOfType, orNull, type JsonSchema } from './json-schema-of-type';

export interface OpenApiOptions {
  readonly schema: SchemaCache;
  readonly access: CallerAccess;
  /** Functions the caller may call (the function allow-list); all executable ones when absent. */
  readonly callable?: (fn: DbFunction) => boolean;
  readonly config: {
    readonly requireAuth: boolean;
    readonly explainEnabled: boolean;
    readonly defaultLimit: number;
    readonly maxLimit: number;
    readonly rpcRequireSchemaQualified: boolean;
  };
  /** The query grammar of the door the mount serves: its filter operators and reserved parameters (lib/pipeline/door.ts). */
  readonly grammar: DescribedGrammar;
  /** Where the router is mounted, e.g. `/api` (the document's server URL). */
  readonly serverUrl: string;
  readonly version: string;
}

type Obj = Record<string, unknown>;


export function openApiDocument(options: OpenApiOptions): Obj {
  const { schema, config } = options;
  const tables = describedTables(schema, options.access);
  const enums = enumNames(schema, tables, describedFunctions(schema, options.callable));
  const schemas: Record<string, JsonSchema> = {};
  const names = new ComponentNames();
  const naming = { enumRef: (t: PgType) => `#/components/schemas/${names.of(`enum:${t.oid}`, enums.get(t.oid) ?? t.name)}` };
  for (const [oid, name] of enums) {
    const type = schema.types?.get(oid);
    if (type) schemas[names.of(`enum:${oid}`, name)] = { type: 'string', enum: [...type.labels], description: `PostgreSQL enum ${type.schema}.${type.name}` };
  }
  const columnSchema = (c: Column, nullable = c.nullable): JsonSchema => jsonSchemaOfType(c.typeOid, schema.types, nullable, naming, c.category);

  const paths: Record<string, Obj> = {};
  const rows = new Map<Table, JsonSchema>();
  for (const t of tables) rows.set(t.table, { $ref: `#/components/schemas/${names.of(`row:${t.table.oid}`, t.table.name)}` });
  for (const t of tables) {
    schemas[names.of(`row:${t.table.oid}`, t.table.name)] = rowSchema(t, columnSchema);
    const row = rows.get(t.table)!;
    let insertRef: JsonSchema | undefined;
    let updateRef: JsonSchema | undefined;
    let nestedRef: JsonSchema | undefined;
    if (insertable(t)) {
      const n = names.of(`insert:${t.table.oid}`, `${t.table.name}.insert`);
      schemas[n] = writeSchema(t.insertColumns, columnSchema, true);
      insertRef = { $ref: `#/components/schemas/${n}` };
      const nested = options.grammar.batches === true ? nestedInsertSchema(t, tables, columnSchema) : undefined;
      if (nested) {
        const nn = names.of(`insert-nested:${t.table.oid}`, `${t.table.name}.insert.nested`);
        schemas[nn] = nested;
        nestedRef = { $ref: `#/components/schemas/${nn}` };
      }
    }
    if (t.access.operations.has('update') && t.updateColumns.length > 0 && t.writable.update && t.table.primaryKey.length > 0) {
      const n = names.of(`update:${t.table.oid}`, `${t.table.name}.update`);
      schemas[n] = writeSchema(t.updateColumns, columnSchema, false);
      updateRef = { $ref: `#/components/schemas/${n}` };
    }
    Object.assign(paths, tablePaths(t, row, insertRef, updateRef, options, tables, rows, nestedRef));
  }

  const fnPaths = functionPaths(schema, options, (oid, nullable, category) => jsonSchemaOfType(oid, schema.types, nullable, naming, category));
  Object.assign(paths, fnPaths);
  // Several requests in one transaction (docs/writing.md): the default grammar's route only.
  if (options.grammar.batches === true && tables.length > 0) paths['/_batch'] = batchPath();

  schemas.Error = errorSchema();
  return {
    openapi: '3.1.0',
    info: {
      title: 'tablegate',
      version: options.version,
      description: 'The tables, views and functions this caller may use, generated from the database schema and the access policy.',
    },
    servers: [{ url: options.serverUrl === '' ? '/' : options.serverUrl }],
    security: config.requireAuth ? [{ bearerAuth: [] }] : [{ bearerAuth: [] }, {}],
    paths,
    components: {
      schemas,
      parameters: sharedParameters(config),
      responses: errorResponses(),
      securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } },
    },
  };
}

/** Component keys must match ^[a-zA-Z0-9._-]+$: other characters become `_`, clashes get a suffix. */
class ComponentNames {
  private readonly byKey = new Map<string, string>();
  private readonly used = new Set<string>(['Error']);
  of(key: string, wanted: string): string {
    const known = this.byKey.get(key);
    if (known !== undefined) return known;
    const base = wanted.replace(/[^A-Za-z0-9._-]/g, '_') || '_';
    let name = base;
    for (let i = 2; this.used.has(name); i++) name = `${base}_${i}`;
    this.used.add(name);
    this.byKey.set(key, name);
    return name;
  }
}

function rowSchema(t: DescribedTable, columnSchema: (c: Column) => JsonSchema): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  for (const c of t.readColumns) properties[c.name] = columnSchema(c);
  return {
    type: 'object',
    description: `${kindName(t.table)} ${t.table.schema}.${t.table.name}: a row as returned without \`select\` (with \`select\`, only the named columns; with \`expand\`, the related rows besides).`,
    properties,
    required: t.readColumns.map((c) => c.name),
  };
}

function insertable(t: DescribedTable): boolean {
  return t.access.operations.has('create') && t.insertColumns.length > 0 && t.writable.insert;
}

/**
 * A nested insert's body (docs/writing.md, "Nested inserts"): the row's columns, and under each
 * relation to a table the caller may insert into, its related row(s): a to-one parent as an
 * object, children as an array (a one-to-one child as an object), without the foreign-key
 * columns the relation fills. Those of this row are then not required. One level is described;
 * the gateway takes the same shape at any depth. Undefined when no relation can be inserted into.
 */
function nestedInsertSchema(t: DescribedTable, all: readonly DescribedTable[], columnSchema: (c: Column, nullable?: boolean) => JsonSchema): JsonSchema | undefined {
  const filled = new Set<Column>();
  const related: Record<string, JsonSchema> = {};
  for (const { relation } of relationsOf(t.table)) {
    const target = all.find((d) => d.table === relation.target);
    if (target === undefined || !insertable(target) || t.table.columnsByName.has(relation.name)) continue;
    const fk = relation.foreignKey;
    if (relation.direction === 'forward') {
      for (const c of fk.columns) filled.add(c);
      related[relation.name] = { ...writeSchema(target.insertColumns, columnSchema, true), description: `A row of ${target.table.name} inserted first; its key fills ${fk.columns.map((c) => c.name).join(', ')}.` };
    } else {
      const child = writeSchema(target.insertColumns.filter((c) => !fk.columns.includes(c)), columnSchema, true);
      related[relation.name] = relation.cardinality === 'many' ? { type: 'array', items: child, description: `Rows of ${target.table.name} inserted after this row, their ${fk.columns.map((c) => c.name).join(', ')} filled from it.` } : child;
    }
  }
  if (Object.keys(related).length === 0) return undefined;
  const own = writeSchema(t.insertColumns, columnSchema, true) as { properties: Record<string, JsonSchema>; required?: string[] };
  const required = (own.required ?? []).filter((n) => ![...filled].some((c) => c.name === n));
  return {
    type: 'object',
    description: `A row of ${t.table.name} with related rows under relation names, inserted in one transaction (docs/writing.md, "Nested inserts"). A foreign-key column is left out when its relation is given.`,
    properties: { ...own.properties, ...related },
    ...(required.length > 0 ? { required } : {}),
    additionalProperties: false,
  };
}

function writeSchema(columns: readonly Column[], columnSchema: (c: Column, nullable?: boolean) => JsonSchema, insert: boolean): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  for (const c of columns) properties[c.name] = columnSchema(c);
  const required = insert ? columns.filter((c) => !c.nullable && !c.hasDefault).map((c) => c.name) : [];
  return { type: 'object', properties, ...(required.length > 0 ? { required } : {}), additionalProperties: false };
}

function kindName(table: Table): string {
  return { r: 'Table', p: 'Partitioned table', v: 'View', m: 'Materialized view', f: 'Foreign table' }[table.kind];
}

const ref = (name: string): Obj => ({ $ref: `#/components/parameters/${name}` });
const errorRef = (status: number): Obj => ({ $ref: `#/components/responses/Error${status}` });

function errors(...statuses: number[]): Record<string, Obj> {
  const out: Record<string, Obj> = {};
  for (const s of [...statuses, 401, 403, 429, 500, 503, 504].sort()) out[String(s)] = errorRef(s);
  return out;
}

function json(schemaObject: JsonSchema, description: string): Obj {
  return { description, content: { 'application/json': { schema: schemaObject } } };
}

function listBody(row: JsonSchema): JsonSchema {
  return {
    type: 'object',
    properties: {
      data: { type: 'array', items: row },
      count: { type: 'integer', description: 'rows in this response' },
      limit: { type: 'integer' },
      offset: { type: 'integer' },
      next_cursor: { type: 'string', description: 'present when the page is full: pass it as `cursor` for the next page' },
      total: { type: 'integer', description: 'with `count=exact`: every matching row' },
    },
    required: ['data', 'count', 'limit', 'offset'],
  };
}

function tablePaths(
  t: DescribedTable,
  row: JsonSchema,
  insert: JsonSchema | undefined,
  update: JsonSchema | undefined,
  options: OpenApiOptions,
  all: readonly DescribedTable[],
  rows: ReadonlyMap<Table, JsonSchema>,
  nested?: JsonSchema,
): Record<string, Obj> {
  const { table, access } = t;
  const base = `/${table.name}`;
  const tag = table.name;
  const paths: Record<string, Obj> = {};
  const filters = filterParameters(options.grammar, t.readColumns);
  const readNames = t.readColumns.map((c) => c.name);
  const relations = relationsOf(table).filter((r) => all.some((d) => d.table === r.relation.target));
  const expandNames = relations.map((r) => (r.relation.cardinality === 'many' ? `nested:${r.relation.name}` : r.relation.name));
  const listParameters = [
    columnList('select', 'Columns to return, comma-separated.', readNames),
    ref('sort'),
    ref('limit'),
    ref('offset'),
    ref('cursor'),
    ref('count'),
    ref('search'),
    columnList('search_columns', 'Text columns `search` looks in, comma-separated (default: every text column).', readNames),
    expandParameter(expandNames),
    { name: 'distinct', in: 'query', required: false, description: 'Return the distinct values of this column.', schema: { type: 'string', enum: readNames } },
    ...filters,
  ];
  const collection: Obj = {
    get: {
      operationId: `list ${table.name}`,
      tags: [tag],
      summary: `List rows of ${table.name}`,
      parameters: listParameters,
      responses: { '200': json(listBody(row), 'One page of rows'), ...errors(400) },
    },
  };
  const returning = columnList('returning', 'Columns to return from the write, comma-separated.', t.returnColumns.map((c) => c.name));
  if (insert) {
    collection.post = {
      operationId: `create ${table.name}`,
      tags: [tag],
      summary: `Insert one row (an object) or a batch (an array) into ${table.name}; with X-Upsert, an upsert`,
      parameters: [
        returning,
        { name: 'X-Upsert', in: 'header', required: false, schema: { type: 'string', enum: ['true'] } },
        { name: 'X-On-Conflict', in: 'header', required: false, description: 'Conflict columns of an upsert, comma-separated (default: the primary key).', schema: { type: 'string' } },
        { name: 'Prefer', in: 'header', required: false, schema: { type: 'string' } },
      ],
      // With related rows under relation names (a nested insert), the object is the wider `.nested` schema.
      requestBody: { required: true, content: { 'application/json': { schema: { oneOf: [nested ?? insert, { type: 'array', items: insert }] } } } },
      responses: {
        '201': json({ type: 'object', properties: { data: { oneOf: [row, { type: 'array', items: row }] }, count: { type: 'integer' } }, required: ['data'] }, 'The written row, or rows and their count for a batch'),
        ...errors(400, 409, 413, 415),
      },
    };
  }
  if (update && options.grammar.batches === true) {
    const keyNames = table.primaryKey.map((c) => c.name);
    collection.patch = {
      operationId: `update many ${table.name}`,
      tags: [tag],
      summary: `Update several rows of ${table.name}, each by its primary key (${keyNames.join(', ')}) with its own values, in one statement (docs/writing.md, "Bulk updates")`,
      parameters: [returning, { name: 'Prefer', in: 'header', required: false, description: '`missing=ignore` skips rows no visible row matches (listed in `missing`); by default they make the whole update a 404.', schema: { type: 'string' } }],
      requestBody: { required: true, content: { 'application/json': { schema: { type: 'array', minItems: 1, items: { allOf: [update, { type: 'object', required: keyNames }] } } } } },
      responses: {
        '200': json({ type: 'object', properties: { data: { type: 'array', items: row }, count: { type: 'integer' }, missing: { type: 'array', items: { type: 'integer' } } }, required: ['data', 'count'] }, 'The updated rows'),
        ...errors(400, 404, 409, 413, 415),
      },
    };
  }
  paths[base] = collection;
  paths[`${base}/aggregate`] = {
    get: {
      operationId: `aggregate ${table.name}`,
      tags: [tag],
      summary: `count, sum, avg, min or max over the rows of ${table.name}`,
      parameters: [
        { name: 'fn', in: 'query', required: true, schema: { type: 'string', enum: ['count', 'sum', 'avg', 'min', 'max'] } },
        { name: 'column', in: 'query', required: false, description: 'Needed by every function but count.', schema: { type: 'string', enum: readNames } },
        ref('search'),
        ...filters,
      ],
      responses: {
        '200': json(
          { type: 'object', properties: { data: { type: 'object', properties: { fn: { type: 'string' }, column: { type: 'string' }, value: {} }, required: ['fn', 'value'] } }, required: ['data'] },
          'The aggregate value (null over no rows, except count)',
        ),
        ...errors(400),
      },
    },
  };
  if (options.config.explainEnabled) {
    paths[`${base}/_explain`] = {
      get: {
        operationId: `explain ${table.name}`,
        tags: [tag],
        summary: `EXPLAIN (ANALYZE, FORMAT JSON) of the list query (explain_roles / explain_scopes may restrict it)`,
        parameters: listParameters,
        responses: { '200': json({ type: 'object', properties: { data: { type: 'object', properties: { plan: { type: 'array' } }, required: ['plan'] } }, required: ['data'] }, 'The query plan'), ...errors(400) },
      },
    };
  }
  // /:id routes exist for tables with a primary key the caller may read.
  if (table.primaryKey.length > 0 && table.primaryKey.every((c) => access.readable(c.name))) {
    const id = {
      name: 'id',
      in: 'path',
      required: true,
      description: `The primary key (${table.primaryKey.map((c) => c.name).join(', ')})${table.primaryKey.length > 1 ? ', its values separated by commas' : ''}.`,
      schema: { type: 'string' },
    };
    const item: Obj = {
      get: {
        operationId: `get ${table.name}`,
        tags: [tag],
        summary: `One row of ${table.name} by primary key`,
        parameters: [id, columnList('select', 'Columns to return, comma-separated.', readNames), expandParameter(expandNames)],
        responses: { '200': json({ type: 'object', properties: { data: row }, required: ['data'] }, 'The row'), ...errors(400, 404) },
      },
    };
    if (update) {
      item.patch = {
        operationId: `update ${table.name}`,
        tags: [tag],
        summary: `Change columns of one row of ${table.name}`,
        parameters: [id, returning],
        requestBody: { required: true, content: { 'application/json': { schema: update } } },
        responses: { '200': json({ type: 'object', properties: { data: row }, required: ['data'] }, 'The updated row'), ...errors(400, 404, 409, 413, 415) },
      };
    }
    if (access.operations.has('delete') && t.writable.delete) {
      item.delete = {
        operationId: `delete ${table.name}`,
        tags: [tag],
        summary: `Delete one row of ${table.name}`,
        parameters: [id, returning],
        responses: { '200': json({ type: 'object', properties: { data: row }, required: ['data'] }, 'The deleted row (with `returning`)'), '204': { description: 'Deleted (without `returning`)' }, ...errors(400, 404, 409) },
      };
    }
    paths[`${base}/{id}`] = item;
    for (const r of relations) {
      if (r.relation.direction !== 'reverse') continue;
      const child = all.find((d) => d.table === r.relation.target);
      if (child === undefined) continue;
      paths[`${base}/{id}/${r.relation.name}`] = {
        get: {
          operationId: `list ${table.name} ${r.relation.name}`,
          tags: [tag],
          summary: `Rows of ${r.relation.target.name} that refer to one row of ${table.name}`,
          parameters: [id, ...listParameters.filter((p) => !isTableSpecific(p)), ...childListParameters(options.grammar, child)],
          responses: { '200': json(listBody(rows.get(child.table)!), 'One page of child rows'), ...errors(400, 404) },
        },
      };
    }
  }
  return paths;
}

/** Shared parameters ($ref) are the same for every table; the others name this table's columns. */
function isTableSpecific(p: Obj): boolean {
  return !('$ref' in p);
}

function childListParameters(grammar: DescribedGrammar, child: DescribedTable): Obj[] {
  const names = child.readColumns.map((c) => c.name);
  return [
    columnList('select', 'Columns to return, comma-separated.', names),
    columnList('search_columns', 'Text columns `search` looks in, comma-separated.', names),
    { name: 'distinct', in: 'query', required: false, schema: { type: 'string', enum: names } },
    ...filterParameters(grammar, child.readColumns),
  ];
}

function columnList(name: string, description: string, columns: readonly string[]): Obj {
  return { name, in: 'query', required: false, description: `${description} One of: ${columns.join(', ')}.`, schema: { type: 'string' } };
}

function expandParameter(names: readonly string[]): Obj {
  return {
    name: 'expand',
    in: 'query',
    required: false,
    description: names.length === 0 ? 'This table has no relation to expand.' : `Related rows to include, comma-separated: ${names.join(', ')}.`,
    schema: { type: 'string' },
  };
}

/** Both spellings of a filter (docs/querying.md): `col=op.value` and `col.op=value`. */
function filterParameters(grammar: DescribedGrammar, columns: readonly Column[]): Obj[] {
  const reserved = new Set(grammar.reservedParameters);
  const opsOf = (c: Column): readonly string[] => (c.category === 'A' ? grammar.filterOperators : grammar.filterOperators.filter((op) => op !== 'contains'));
  const out: Obj[] = [];
  const seen = new Set<string>();
  const add = (p: Obj & { name: string }): void => {
    if (reserved.has(p.name) || seen.has(p.name)) return;
    seen.add(p.name);
    out.push(p);
  };
  for (const c of columns) {
    add({ name: c.name, in: 'query', required: false, description: `Filter on ${c.name}: \`<value>\` (equals) or \`<op>.<value>\`, op one of ${opsOf(c).join(', ')}.`, schema: { type: 'string' } });
  }
  for (const c of columns) {
    for (const op of opsOf(c)) add({ name: `${c.name}.${op}`, in: 'query', required: false, schema: op === 'is_null' ? { type: 'string', enum: ['true', 'false'] } : { type: 'string' } });
  }
  return out;
}

function sharedParameters(config: OpenApiOptions['config']): Obj {
  return {
    sort: { name: 'sort', in: 'query', required: false, description: 'Comma-separated `col`, `-col`, `col:asc` or `col:desc` (default: the primary key); `col` may be a column of a to-one related row, `user.name` (docs/querying.md, "Sort by a related column").', schema: { type: 'string' } },
    limit: { name: 'limit', in: 'query', required: false, description: `Rows per page (default ${config.defaultLimit}; larger than ${config.maxLimit} is clamped).`, schema: { type: 'integer', minimum: 0 } },
    offset: { name: 'offset', in: 'query', required: false, schema: { type: 'integer', minimum: 0 } },
    cursor: { name: 'cursor', in: 'query', required: false, description: 'The `next_cursor` of the previous page (same `sort`; not with `offset`).', schema: { type: 'string' } },
    count: { name: 'count', in: 'query', required: false, description: '`exact` adds `total`, every matching row.', schema: { type: 'string', enum: ['exact'] } },
    search: { name: 'search', in: 'query', required: false, description: 'Full-text search (websearch_to_tsquery) over the text columns.', schema: { type: 'string' } },
  };
}

function errorSchema(): JsonSchema {
  return {
    type: 'object',
    properties: {
      code: { type: 'string', enum: Object.keys(errorCatalogue) },
      message: { type: 'string' },
      details: {},
      hint: { type: 'string' },
    },
    required: ['code', 'message'],
  };
}

/** One response per status of the catalogue, naming the codes it carries (docs/errors.md). */
function errorResponses(): Obj {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const [code, entry] of Object.entries(errorCatalogue) as [ErrorCode, { status: number | string }][]) {
    if (typeof entry.status !== 'number') continue;
    byStatus.set(entry.status, [...(byStatus.get(entry.status) ?? []), code]);
  }
  const out: Obj = {};
  for (const [status, codes] of [...byStatus].sort((a, b) => a[0] - b[0])) {
    out[`Error${status}`] = json({ $ref: '#/components/schemas/Error' }, `Error: ${codes.join(', ')} (docs/errors.md)`);
  }
  return out;
}

function functionPaths(schema: SchemaCache, options: OpenApiOptions, typeSchema: (oid: number, nullable: boolean, category: string) => JsonSchema): Record<string, Obj> {
  const paths: Record<string, Obj> = {};
  const byPath = new Map<string, DbFunction[]>();
  for (const fn of describedFunctions(schema, options.callable)) {
    // Unqualified names resolve through the schemas in order: the first schema with the name owns it.
    const owner = schema.functions.find((f) => f.name === fn.name && f.executable)?.schema;
    const qualified = options.config.rpcRequireSchemaQualified || owner !== fn.schema;
    const path = `/rpc/${qualified ? `${fn.schema}.${fn.name}` : fn.name}`;
    byPath.set(path, [...(byPath.get(path) ?? []), fn]);
  }
  for (const [path, overloads] of byPath) {
    const bodies = overloads.map((fn) => argumentsSchema(fn, typeSchema));
    const results = overloads.map((fn) => resultSchema(fn, typeSchema));
    const fn = overloads[0]!;
    paths[path] = {
      post: {
        operationId: `call ${fn.schema}.${fn.name}`,
        tags: ['rpc'],
        summary: `Call ${fn.schema}.${fn.name}(${overloads.map((f) => f.identityArgs).join(' | ')})`,
        requestBody: { required: false, content: { 'application/json': { schema: bodies.length === 1 ? bodies[0] : { oneOf: bodies } } } },
        responses: {
          '200': json({ type: 'object', properties: { data: results.length === 1 ? results[0] : { anyOf: results } }, required: ['data'] }, 'The result'),
          ...errors(400, 404),
        },
      },
    };
  }
  paths['/_rpc/contracts'] = {
    get: {
      operationId: 'list function contracts',
      tags: ['rpc'],
      summary: 'The signatures of the callable functions',
      responses: { '200': json({ type: 'object', properties: { data: { type: 'array', items: { type: 'object' } } }, required: ['data'] }, 'One entry per callable function'), ...errors() },
    },
  };
  return paths;
}

/** `POST /_batch` (docs/writing.md, "Batches: several writes in one transaction"). */
function batchPath(): Obj {
  // `$ref` as a property name would read as a JSON reference in the document: matched by pattern instead.
  const reference = { type: 'object', patternProperties: { '^[$]ref$': { type: 'string', pattern: '^[0-9]+([.][^.]+)+$' } }, minProperties: 1, maxProperties: 1, additionalProperties: false };
  const operation = {
    type: 'object',
    properties: {
      method: { type: 'string', enum: ['GET', 'POST', 'PATCH', 'DELETE'] },
      path: { type: 'string', description: 'A route below the mount, e.g. /orders or /orders/7.' },
      query: { type: 'object', additionalProperties: { anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }, reference] } },
      body: { description: 'The request body; a row value may be {"$ref": "<operation>.<key>"}.' },
      headers: { type: 'object', properties: { Prefer: { type: 'string' } }, additionalProperties: false },
    },
    required: ['method', 'path'],
    additionalProperties: false,
  };
  return {
    post: {
      operationId: 'batch',
      tags: ['batch'],
      summary: 'Several requests, in order, in one transaction as the caller: all succeed or nothing is written',
      requestBody: { required: true, content: { 'application/json': { schema: { type: 'array', minItems: 1, items: operation } } } },
      responses: {
        '200': json({ type: 'object', properties: { data: { type: 'array', items: { type: 'object', properties: { status: { type: 'integer' }, body: {} }, required: ['status', 'body'] } } }, required: ['data'] }, "Each operation's status and body, in order"),
        ...errors(400, 403, 404, 409, 413, 415),
      },
    },
  };
}

/** Named arguments as an object; a function with an unnamed argument takes a positional array. */
export function argumentsSchema(fn: DbFunction, typeSchema: (oid: number, nullable: boolean, category: string) => JsonSchema): JsonSchema {
  if (fn.args.some((a) => a.name === '')) {
    return { type: 'array', prefixItems: fn.args.map((a) => typeSchema(a.typeOid, true, a.category)), minItems: fn.args.filter((a) => !a.hasDefault).length };
  }
  const properties: Record<string, JsonSchema> = {};
  for (const a of fn.args) properties[a.name] = typeSchema(a.typeOid, true, a.category);
  const required = fn.args.filter((a) => !a.hasDefault).map((a) => a.name);
  return { type: 'object', properties, ...(required.length > 0 ? { required } : {}), additionalProperties: false };
}

/** What `data` holds: rows for a set or table result, an object for a composite, the value, or null for void (docs/rpc.md). */
export function resultSchema(fn: DbFunction, typeSchema: (oid: number, nullable: boolean, category: string) => JsonSchema): JsonSchema {
  let one: JsonSchema;
  switch (fn.returns) {
    case 'void':
      return { type: 'null' };
    case 'row': {
      const properties: Record<string, JsonSchema> = {};
      for (const c of fn.resultColumns) properties[c.name] = typeSchema(c.typeOid, true, '');
      one = { type: 'object', properties, required: fn.resultColumns.map((c) => c.name) };
      break;
    }
    case 'scalar':
      one = typeSchema(fn.returnTypeOid, false, '');
      break;
  }
  return fn.returnsSet ? { type: 'array', items: fn.returns === 'scalar' ? orNull(one, true) : one } : orNull(one, true);
}
