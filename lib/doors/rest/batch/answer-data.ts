/** The `data` of a JSON answer body (`{"data":...}`), as its text; undefined when it has none. */
import type { OperationAnswer } from '../../../pipeline/door';
import { splitJsonObject } from '../../shared/split-json-object';

export function answerData(answer: OperationAnswer): string | undefined {
  if (answer.body === null) return undefined;
  const data = splitJsonObject(answer.body).reverse().find(([k]) => k === 'data')?.[1];
  return data === 'null' ? undefined : data;
}
