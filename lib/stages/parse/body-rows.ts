/**
 * bodyRowsOf: the text of a write body (already checked by parseJsonBody and resolveBodyColumns:
 * an object, or an array of objects) -> its rows as key -> value text, frozen.
 * Never: parses a value, so the rows keep the caller's exact numbers.
 */
import type { BodyRow } from '../../command/command';
import { splitJsonArray } from './split-json-array';
import { splitJsonObject } from './split-json-object';

export function bodyRowsOf(text: string, batch: boolean): readonly BodyRow[] {
  const objects = batch ? splitJsonArray(text) : [text];
  return Object.freeze(objects.map((object) => Object.freeze(Object.fromEntries(splitJsonObject(object)))));
}
