/**
 * compile: Command -> Plan.
 * In: a command whose names are schema-cache objects. Out: `{ text, values }` plus how to run it.
 * Never: reads caller text (there is none left), or puts a value anywhere but a `$n` parameter.
 */
import { assertNever } from '../../command/command';
import { compileSql } from '../../sql/sql';
import type { CommandContext, Plan, Stages } from '../stage-types';
import { compileGet } from './compile-get';
import { compileList } from './compile-list';

export function createCompileStage(): Stages['compile'] {
  return function compile(ctx: CommandContext): Plan {
    const { command, config } = ctx;
    switch (command.kind) {
      case 'list':
        return Object.freeze({ query: compileSql(compileList(command, config.searchConfig)), readOnly: true });
      case 'get':
        return Object.freeze({ query: compileSql(compileGet(command)), readOnly: true });
      default:
        return assertNever(command, 'command');
    }
  };
}
