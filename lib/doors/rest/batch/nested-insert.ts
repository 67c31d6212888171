/**
 * `POST /{table}` with related rows under a relation name (docs/writing.md, "Nested inserts"):
 * `{"total": 10, "order_items": [{...}], "user": {...}}`. Each table's rows become the single
 * request `POST /{table}`, run in order in one transaction: a to-one parent (`user`, this table
 * holds the foreign key) first, then the row itself with the foreign key taken from the parent's
 * answer, then its children (`order_items`, their table holds the key) with theirs taken from the
 * row's answer; nested the same way to any depth. In: the table and the body text. Out: the
 * operations and how their answers make one tree (the row, with each relation's rows under its
 * name). Never: accepts a foreign-key column beside the relation that fills it, an ambiguous
 * relation name, query parameters or `Prefer` (refused, not ignored), or an array of parents.
 */
import { GatewayError } from '../../../errors/gateway-error';
import type { ExpandedOperation, Expansion, OperationAnswer } from '../../../pipeline/door';
import type { GatewayRequest } from '../../../pipeline/gateway-request';
import type { ResolvedConfig } from '../../../pipeline/resolved-config';
import { relationsNamed } from '../../../schema/relations';
import type { Relation, SchemaCache, Table } from '../../../schema/schema-types';
import { splitJsonArray } from '../../shared/split-json-array';
import { splitJsonObject } from '../../shared/split-json-object';
import { answerData } from './answer-data';
import { type OperationTemplate, type RowTemplate, toOperation, type ValueTemplate } from './operation-template';

/** A row in the answer's tree: the operation that inserted it (and its index there, for an array insert) and its related rows. */
interface Node {
  readonly op: number;
  readonly index: number | undefined;
  readonly related: { readonly key: string; readonly many: boolean; readonly nodes: Node[] }[];
}

/** The relation a body key names, when it is not a column (undefined: leave the key to the insert's own checks). */
export function nestedRelation(table: Table, key: string): Relation | undefined {
  if (table.columnsByName.has(key)) return undefined;
  const named = relationsNamed(table, key);
  if (named.length > 1) throw new GatewayError('PARSE_ERROR', `\`${key.slice(0, 64)}\` names ${named.length} relations of \`${table.name}\`; use one of their unique names.`, { hint: named.map((r) => r.relation.name).join(', ') });
  return named[0]?.relation;
}

/** Whether the object body text names a relation of the table (a nested insert). Invalid JSON: no. */
export function isNestedInsert(table: Table, body: string): boolean {
  try {
    return splitJsonObject(body).some(([key]) => !table.columnsByName.has(key) && relationsNamed(table, key).length > 0);
  } catch {
    return false;
  }
}

export function nestedInsert(schema: SchemaCache, table: Table, request: GatewayRequest, config: ResolvedConfig): Expansion {
  if (request.query.length > 0 || request.headers.prefer !== undefined) {
    throw new GatewayError('PARSE_ERROR', 'A nested insert takes no query parameters and no Prefer header: it returns every inserted row, as a tree.', {
      hint: 'Leave out returning, expand, on_conflict and Prefer, or insert the rows with POST /_batch.',
    });
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(request.body ?? '');
  } catch {
    throw new GatewayError('PARSE_ERROR', 'The request body is not valid JSON.');
  }
  void parsed;
  const templates: OperationTemplate[] = [];
  const root = plan(schema, table, splitJsonObject(request.body!), table.name, templates, []);
  if (templates.length > config.maxBatchOperations) {
    throw new GatewayError('PAYLOAD_TOO_LARGE', `The nested insert needs ${templates.length} inserts; at most ${config.maxBatchOperations} are accepted (max_batch_operations).`, {
      details: { operations: templates.length, max_batch_operations: config.maxBatchOperations },
    });
  }
  const operations: ExpandedOperation[] = templates.map((t) => toOperation(t, request, config.maxRequestBodyBytes));
  return Object.freeze({
    operations,
    skipsNotFound: false,
    answer: (answers: readonly (OperationAnswer | undefined)[]) => ({ status: 201, body: `{"data":${tree(root, answers)}}` }),
  });
}

/**
 * Adds the inserts for one row (its to-one parents first, then the row, then its children) and
 * returns its node. `fromParent`: foreign-key values the row takes from the row it hangs under.
 */
function plan(schema: SchemaCache, table: Table, entries: [string, string][], at: string, templates: OperationTemplate[], fromParent: RowTemplate): Node {
  // Each insert is a single request to /{table}: the name must lead to this very table.
  if (schema.tablesByName.get(table.name) !== table) throw bad(at, `\`${table.schema}.${table.name}\` is not reachable as /${table.name}, so rows cannot be nested into it.`);
  const row: (readonly [string, ValueTemplate])[] = [...fromParent];
  const filled = new Set(fromParent.map(([k]) => k));
  const parents: { key: string; relation: Relation; text: string }[] = [];
  const children: { key: string; relation: Relation; text: string }[] = [];
  for (const [key, text] of entries) {
    const relation = nestedRelation(table, key);
    if (relation === undefined) {
      if (filled.has(key)) throw bad(at, `\`${key}\` is filled from the row this one is nested under; leave it out.`);
      row.push([key, { text }]);
    } else if (relation.direction === 'forward') parents.push({ key, relation, text });
    else children.push({ key, relation, text });
  }
  const related: Node['related'] = [];
  for (const { key, relation, text } of parents) {
    if (!text.startsWith('{')) throw bad(`${at}.${key}`, `\`${key}\` is a to-one relation: its value is one JSON object.`);
    const parent = plan(schema, relation.target, splitJsonObject(text), `${at}.${key}`, templates, []);
    const fk = relation.foreignKey;
    fk.columns.forEach((column, i) => {
      if (row.some(([k]) => k === column.name)) throw bad(at, `\`${column.name}\` is filled from \`${key}\`; leave it out.`);
      row.push([column.name, { ref: { text: `${at}.${key}.${fk.referencedColumns[i]!.name}`, operation: parent.op, path: [fk.referencedColumns[i]!.name] } }]);
    });
    related.push({ key, many: false, nodes: [parent] });
  }
  const op = templates.length;
  templates.push({ method: 'POST', segments: [table.name], rawSegments: [encodeURIComponent(table.name)], query: [], body: { row }, headers: {}, where: { at } });
  const node: Node = { op, index: undefined, related };
  for (const { key, relation, text } of children) {
    const fk = relation.foreignKey;
    // The child's foreign key, from this row's answer.
    const keyRefs: RowTemplate = fk.columns.map((column, i) => [column.name, { ref: { text: `${at}.${fk.referencedColumns[i]!.name}`, operation: op, path: [fk.referencedColumns[i]!.name] } }] as const);
    const many = relation.cardinality === 'many';
    if (!many && !text.startsWith('{')) throw bad(`${at}.${key}`, `\`${key}\` is a to-one relation: its value is one JSON object.`);
    if (many && !text.startsWith('[')) throw bad(`${at}.${key}`, `\`${key}\` is a to-many relation: its value is a JSON array of objects.`);
    const rows = many ? splitJsonArray(text) : [text];
    if (rows.some((r) => !r.startsWith('{'))) throw bad(`${at}.${key}`, `Each row of \`${key}\` is a JSON object.`);
    const nested = rows.map((r) => splitJsonObject(r));
    if (schema.tablesByName.get(fk.table.name) !== fk.table) throw bad(`${at}.${key}`, `\`${fk.table.schema}.${fk.table.name}\` is not reachable as /${fk.table.name}, so rows cannot be nested into it.`);
    const flat = nested.every((e) => e.every(([k]) => nestedRelation(fk.table, k) === undefined));
    if (flat && many && rows.length > 0) {
      // Rows without relations of their own: one batch insert.
      const childOp = templates.length;
      const body = nested.map((e) => {
        for (const [k] of e) if (keyRefs.some(([c]) => c === k)) throw bad(`${at}.${key}`, `\`${k}\` is filled from the row this one is nested under; leave it out.`);
        return [...keyRefs, ...e.map(([k, v]) => [k, { text: v }] as const)];
      });
      templates.push({ method: 'POST', segments: [fk.table.name], rawSegments: [encodeURIComponent(fk.table.name)], query: [], body: { rows: body }, headers: {}, where: { at: `${at}.${key}` } });
      related.push({ key, many, nodes: rows.map((_, i) => ({ op: childOp, index: i, related: [] })) });
    } else {
      related.push({ key, many, nodes: nested.map((e, i) => plan(schema, fk.table, e, many ? `${at}.${key}[${i}]` : `${at}.${key}`, templates, keyRefs)) });
    }
  }
  return node;
}

/** The answer's tree: each row's JSON as PostgreSQL returned it, with its related rows added under their keys. */
function tree(node: Node, answers: readonly (OperationAnswer | undefined)[]): string {
  const answer = answers[node.op];
  let data = answer === undefined ? undefined : answerData(answer);
  if (data !== undefined && node.index !== undefined) data = splitJsonArray(data)[node.index];
  if (data === undefined || !data.startsWith('{')) return 'null';
  const entries = splitJsonObject(data).map(([k, v]) => `${JSON.stringify(k)}:${v}`);
  for (const { key, many, nodes } of node.related) {
    const values = nodes.map((n) => tree(n, answers));
    entries.push(`${JSON.stringify(key)}:${many ? `[${values.join(',')}]` : (values[0] ?? 'null')}`);
  }
  return `{${entries.join(',')}}`;
}

function bad(at: string, message: string): GatewayError {
  return new GatewayError('PARSE_ERROR', `${message}`, { details: { at } });
}
