/** Aggregate and explain results -> HTTP (contract §3). */
import type { AggregateCommand, ExplainCommand } from '../command/command';
import type { Result } from '../stages/stage-types';
import type { Rendered } from './render-result';

export function renderAggregate(_command: AggregateCommand, _result: Result): Rendered {
  throw new Error('renderAggregate is not implemented yet');
}

export function renderExplain(_command: ExplainCommand, _result: Result): Rendered {
  throw new Error('renderExplain is not implemented yet');
}
