/**
 * The rows of an insert body, for both dialects. batchRowsOf: the parsed body -> whether it is a
 * batch and its rows, refusing a batch over `max_batch_size` (413). bodyRowsOf: the text of a
 * write body (already checked by parseJsonBody and resolveBodyColumns: an object, or an array of
 * objects) -> its rows as key -> value text, frozen.
 * Never: parses a value, so the rows keep the caller's exact numbers.
 */
import type { BodyRow } from '../../command/command';
import { GatewayError } from '../../errors/gateway-error';
import { splitJsonArray } from './split-json-array';
import { splitJsonObject } from './split-json-object';

export function bodyRowsOf(text: string, batch: boolean): readonly BodyRow[] {
  const objects = batch ? splitJsonArray(text) : [text];
  return Object.freeze(objects.map((object) => Object.freeze(Object.fromEntries(splitJsonObject(object)))));
}

/** An array body is a batch of at most `maxBatchSize` rows; any other body is one row. */
export function batchRowsOf(value: unknown, maxBatchSize: number): { readonly batch: boolean; readonly rows: readonly unknown[] } {
  const batch = Array.isArray(value);
  const rows: readonly unknown[] = batch ? (value as unknown[]) : [value];
  if (rows.length > maxBatchSize) {
    throw new GatewayError('PAYLOAD_TOO_LARGE', `The batch has ${rows.length} rows; at most ${maxBatchSize} are accepted (max_batch_size).`, {
      details: { rows: rows.length, max_batch_size: maxBatchSize },
      hint: 'Split the batch into several requests.',
    });
  }
  return { batch, rows };
}
