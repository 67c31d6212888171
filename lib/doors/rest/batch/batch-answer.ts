/**
 * A batch's answer (docs/writing.md, "Batches"): 200 with each operation's status and body, in
 * order, the bodies spliced in as the operations answered them.
 */
import type { OperationAnswer } from '../../../pipeline/door';

export function batchAnswer(answers: readonly (OperationAnswer | undefined)[]): OperationAnswer {
  const items = answers.map((a) => (a === undefined ? 'null' : `{"status":${a.status},"body":${a.body ?? 'null'}}`));
  return { status: 200, body: `{"data":[${items.join(',')}]}` };
}
