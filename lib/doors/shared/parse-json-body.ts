/**
 * parseJsonBody: the raw body of a write -> its parsed value, for shape and key checks only.
 * In: the digested request. Out: the parsed value beside the untouched text. The text is what
 * gets bound (one json parameter); the parsed value must never reach SQL, because JSON.parse
 * rounds integers above 2^53 and numerics with many digits.
 * Never: accepts a non-JSON media type (415), an empty body, or a value nested deeper than
 * MAX_JSON_DEPTH / an object with more than MAX_OBJECT_KEYS keys (400: bounded work per request).
 */
import { GatewayError } from '../../errors/gateway-error';
import type { GatewayRequest } from '../../pipeline/gateway-request';

/** Deepest nesting accepted: a row object is depth 1, its json/jsonb values add more. */
export const MAX_JSON_DEPTH = 64;
/** Most keys accepted in one JSON object (PostgreSQL tables have at most 1600 columns). */
export const MAX_OBJECT_KEYS = 10000;

export interface JsonBody {
  readonly text: string;
  readonly value: unknown;
}

export function parseJsonBody(request: GatewayRequest): JsonBody {
  checkMediaType(request.headers['content-type']);
  const text = request.body;
  if (text === undefined || text.trim() === '') {
    throw new GatewayError('PARSE_ERROR', 'This request needs a JSON body.', { hint: 'Send a JSON object (or, for POST, an array of objects).' });
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new GatewayError('PARSE_ERROR', `The request body is not valid JSON: ${err instanceof Error ? err.message : 'syntax error'}.`);
  }
  checkShape(value);
  return Object.freeze({ text, value });
}

/** `application/json` or any `+json` type (RFC 6839), optionally with `charset=utf-8`. */
function checkMediaType(header: string | undefined): void {
  const [type = '', ...params] = (header ?? '').split(';').map((p) => p.trim().toLowerCase());
  const json = type === 'application/json' || /^application\/[a-z0-9.+-]+\+json$/.test(type);
  const charset = params.find((p) => p.startsWith('charset='))?.slice('charset='.length).replace(/"/g, '');
  if (!json || (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8')) {
    throw new GatewayError('UNSUPPORTED_MEDIA_TYPE', `Write bodies must be application/json${header ? `, not \`${header.slice(0, 64)}\`` : ' (no Content-Type was sent)'}.`, {
      hint: 'Send the header Content-Type: application/json.',
    });
  }
}

/** Iterative, so a hostile nesting depth cannot overflow the stack before it is refused. */
function checkShape(root: unknown): void {
  const stack: [unknown, number][] = [[root, 1]];
  while (stack.length > 0) {
    const [value, depth] = stack.pop()!;
    if (typeof value !== 'object' || value === null) continue;
    if (depth > MAX_JSON_DEPTH) {
      throw new GatewayError('PARSE_ERROR', `The JSON body is nested deeper than ${MAX_JSON_DEPTH} levels.`, { details: { max_depth: MAX_JSON_DEPTH } });
    }
    const children = Array.isArray(value) ? value : Object.values(value);
    if (!Array.isArray(value) && children.length > MAX_OBJECT_KEYS) {
      throw new GatewayError('PARSE_ERROR', `A JSON object in the body has more than ${MAX_OBJECT_KEYS} keys.`, { details: { max_keys: MAX_OBJECT_KEYS } });
    }
    for (const child of children) if (typeof child === 'object' && child !== null) stack.push([child, depth + 1]);
  }
}
