/**
 * `POST /_batch` -> the operations of a batch (docs/writing.md, "Batches: several writes in one
 * transaction"). In: a JSON array of `{ "method", "path", "query"?, "body"?, "headers"? }`. Out:
 * one template per operation, its body kept as the caller's text and its `{"$ref": ...}` values
 * marked. Never: accepts more than `max_batch_operations` operations (413), an unknown key, a
 * method other than GET, POST, PATCH, DELETE, a nested `_batch`, or a reference to the operation
 * itself or a later one (400, `details.operation` naming it).
 */
import { GatewayError } from '../../../errors/gateway-error';
import { locatedError } from '../../../errors/located-error';
import type { GatewayRequest } from '../../../pipeline/gateway-request';
import type { ResolvedConfig } from '../../../pipeline/resolved-config';
import { parseJsonBody } from '../../shared/parse-json-body';
import { splitJsonArray } from '../../shared/split-json-array';
import { splitJsonObject } from '../../shared/split-json-object';
import type { BodyTemplate, OperationTemplate, RowTemplate, ValueTemplate } from './operation-template';
import { isReference, parseReference, type Reference } from './resolve-reference';

const methods = new Set(['GET', 'POST', 'PATCH', 'DELETE']);
const keys = new Set(['method', 'path', 'query', 'body', 'headers']);
/** Headers an operation may carry: the write preferences (upserts). Any other is refused, not ignored. */
const operationHeaders = new Set(['prefer']);

export function parseBatch(request: GatewayRequest, config: ResolvedConfig): OperationTemplate[] {
  const body = parseJsonBody(request);
  if (!Array.isArray(body.value)) throw new GatewayError('PARSE_ERROR', 'A batch is a JSON array of operations.', { hint: 'Send [{"method":"POST","path":"/orders","body":{...}}, ...].' });
  const values = body.value as unknown[];
  if (values.length === 0) throw new GatewayError('PARSE_ERROR', 'The batch has no operations.');
  if (values.length > config.maxBatchOperations) {
    throw new GatewayError('PAYLOAD_TOO_LARGE', `The batch has ${values.length} operations; at most ${config.maxBatchOperations} are accepted (max_batch_operations).`, {
      details: { operations: values.length, max_batch_operations: config.maxBatchOperations },
      hint: 'Split it into several batches (each is its own transaction).',
    });
  }
  const texts = splitJsonArray(body.text);
  return values.map((value, i) => {
    try {
      return parseOperation(value, texts[i]!, i);
    } catch (err) {
      if (err instanceof GatewayError) throw locatedError(err, { operation: i }, `Operation ${i} of the batch`);
      throw err;
    }
  });
}

function parseOperation(value: unknown, text: string, at: number): OperationTemplate {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw bad('Each operation is a JSON object such as {"method":"POST","path":"/orders","body":{...}}.');
  const op = value as Record<string, unknown>;
  for (const key of Object.keys(op)) if (!keys.has(key)) throw bad(`An operation has no key \`${key.slice(0, 64)}\`; it takes method, path, query, body and headers.`);
  const method = op.method;
  if (typeof method !== 'string' || !methods.has(method)) throw bad('An operation\'s `method` is one of "GET", "POST", "PATCH", "DELETE".');
  if (typeof op.path !== 'string' || op.path === '') throw bad('An operation\'s `path` is a route below the mount, such as "/orders" or "/orders/7".');
  const [pathText = '', queryText] = op.path.split('?', 2) as [string, string | undefined];
  const rawSegments = pathText.split('/').filter((s) => s !== '');
  let segments: string[];
  try {
    segments = rawSegments.map((s) => decodeURIComponent(s));
  } catch {
    throw bad('The operation\'s `path` is not valid percent-encoding.');
  }
  if (segments[0] === '_batch') throw bad('A batch cannot contain a batch.');
  const query: (readonly [string, string | Reference])[] = [];
  if (queryText !== undefined) for (const [k, v] of new URLSearchParams(queryText)) query.push([k, v]);
  if (op.query !== undefined) query.push(...parseQuery(op.query, at));
  const entries = splitJsonObject(text);
  const bodyText = entries.reverse().find(([k]) => k === 'body')?.[1];
  if (bodyText !== undefined && (method === 'GET' || method === 'DELETE')) throw bad(`A ${method} operation takes no body.`);
  // No body: the route decides, as for a single request (a function without arguments takes none).
  return Object.freeze({
    method,
    segments: Object.freeze(segments),
    rawSegments: Object.freeze(rawSegments),
    query: Object.freeze(query),
    body: bodyText === undefined ? undefined : bodyTemplate(op.body, bodyText, at),
    headers: parseHeaders(op.headers),
    where: Object.freeze({ operation: at }),
  });
}

function parseQuery(value: unknown, at: number): (readonly [string, string | Reference])[] {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw bad('An operation\'s `query` is an object of parameters, such as {"status":"eq.paid","limit":"10"}.');
  const pairs: (readonly [string, string | Reference])[] = [];
  for (const [key, v] of Object.entries(value)) {
    if (typeof v === 'string') pairs.push([key, v]);
    else if (Array.isArray(v) && v.every((e) => typeof e === 'string')) for (const e of v as string[]) pairs.push([key, e]);
    else if (isReference(v)) pairs.push([key, parseReference(v, at)]);
    else throw bad(`The query parameter \`${key.slice(0, 64)}\` is a string, an array of strings (a repeated parameter) or a reference {"$ref":"0.id"} (an equality filter).`);
  }
  return pairs;
}

function parseHeaders(value: unknown): Readonly<Record<string, string>> {
  if (value === undefined) return Object.freeze({});
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw bad('An operation\'s `headers` is an object, such as {"Prefer":"resolution=merge-duplicates"}.');
  const headers: Record<string, string> = {};
  for (const [name, v] of Object.entries(value)) {
    const lower = name.toLowerCase();
    if (!operationHeaders.has(lower)) throw bad(`An operation may carry the header Prefer only, not \`${name.slice(0, 64)}\`: it runs as the batch's caller.`);
    if (typeof v !== 'string') throw bad(`The header \`${name}\` is a string.`);
    headers[lower] = v;
  }
  return Object.freeze(headers);
}

/** A body: its rows' values as texts, references marked; anything else as its text for the route to judge. */
function bodyTemplate(value: unknown, text: string, at: number): BodyTemplate {
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) return Object.freeze({ row: rowTemplate(value as Record<string, unknown>, text, at) });
  if (Array.isArray(value) && value.every((r) => typeof r === 'object' && r !== null && !Array.isArray(r))) {
    const texts = splitJsonArray(text);
    return Object.freeze({ rows: Object.freeze(value.map((row, i) => rowTemplate(row as Record<string, unknown>, texts[i]!, at))) });
  }
  return Object.freeze({ text });
}

function rowTemplate(row: Record<string, unknown>, text: string, at: number): RowTemplate {
  // splitJsonObject keeps a repeated key's last value, as JSON.parse does.
  const seen = new Map<string, string>();
  for (const [k, v] of splitJsonObject(text)) seen.set(k, v);
  return Object.freeze(
    [...seen].map(([k, v]): readonly [string, ValueTemplate] => Object.freeze([k, isReference(row[k]) ? Object.freeze({ ref: parseReference(row[k], at) }) : Object.freeze({ text: v })])),
  );
}

function bad(message: string): GatewayError {
  return new GatewayError('PARSE_ERROR', message);
}

