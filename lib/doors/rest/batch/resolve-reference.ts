/**
 * `{"$ref": "0.id"}` (docs/writing.md, "References between operations"): a value of an earlier
 * operation's answer. The first part is the operation's index; the rest walk its answer's `data`:
 * an object's key, an array's index; a one-row array may be stepped over (`0.id` on a batch
 * insert of one row). In: the reference and the answers so far. Out: the value's JSON text, as
 * PostgreSQL wrote it (numbers keep every digit). Never: resolves to a later operation, or
 * guesses: a missing value is BATCH_REFERENCE_INVALID.
 */
import { GatewayError } from '../../../errors/gateway-error';
import type { OperationAnswer } from '../../../pipeline/door';
import { splitJsonArray } from '../../shared/split-json-array';
import { answerData } from './answer-data';
import { splitJsonObject } from '../../shared/split-json-object';

export interface Reference {
  /** The reference as the caller wrote it, for messages. */
  readonly text: string;
  readonly operation: number;
  readonly path: readonly string[];
}

/** Checks the reference's shape: `{"$ref": "<earlier index>.<key>..."}` made in operation `at`. */
export function parseReference(value: unknown, at: number): Reference {
  const text = (value as { $ref?: unknown }).$ref;
  if (typeof text !== 'string' || Object.keys(value as object).length !== 1) {
    throw invalid('A reference is an object with one key, `$ref`, whose value is a string such as "0.id".', text);
  }
  const [first = '', ...path] = text.split('.');
  if (!/^\d{1,6}$/.test(first) || path.length === 0 || path.some((p) => p === '')) {
    throw invalid(`The reference "${clip(text)}" is not \`<operation index>.<key>\` (e.g. "0.id").`, text);
  }
  const operation = Number(first);
  if (operation >= at) throw invalid(`The reference "${clip(text)}" names operation ${operation}; an operation may only use the answers of the operations before it.`, text);
  return Object.freeze({ text, operation, path: Object.freeze(path) });
}

/** Whether a parsed JSON value is a reference (an object whose only key is `$ref`). */
export function isReference(value: unknown): boolean {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && Object.prototype.hasOwnProperty.call(value, '$ref');
}

export function resolveReference(ref: Reference, earlier: readonly (OperationAnswer | undefined)[]): string {
  const answer = earlier[ref.operation];
  if (answer === undefined || answer.body === null) throw invalid(`The reference "${clip(ref.text)}" names operation ${ref.operation}, which answered no body.`, ref.text);
  let text = answerData(answer);
  for (const step of ref.path) {
    if (text?.startsWith('[')) {
      const elements = splitJsonArray(text);
      if (/^\d+$/.test(step)) {
        text = elements[Number(step)];
        continue;
      }
      // A one-row answer (a batch insert of one row) is stepped over.
      text = elements.length === 1 ? elements[0] : undefined;
    }
    text = text?.startsWith('{') ? splitJsonObject(text).reverse().find(([k]) => k === step)?.[1] : undefined;
    if (text === undefined) break;
  }
  if (text === undefined) throw invalid(`The reference "${clip(ref.text)}" names no value in the answer of operation ${ref.operation}.`, ref.text, 'Check that the operation returns that column (its `returning`, the policy\'s returnable columns).');
  return text;
}

/** A referenced value as a query parameter's text: a string, number or boolean; anything else is refused. */
export function referenceQueryValue(ref: Reference, text: string): string {
  if (text.startsWith('"')) return JSON.parse(text) as string;
  if (/^(-?\d|true$|false$)/.test(text)) return text;
  throw invalid(`The reference "${clip(ref.text)}" is ${text === 'null' ? 'null' : 'not a string, number or boolean'}, which a query filter cannot compare with.`, ref.text);
}

function invalid(message: string, ref: unknown, hint?: string): GatewayError {
  return new GatewayError('BATCH_REFERENCE_INVALID', message, { details: { ref: typeof ref === 'string' ? clip(ref) : null }, ...(hint ? { hint } : {}) });
}

function clip(text: string): string {
  return text.length > 64 ? `${text.slice(0, 64)}…` : text;
}
