/**
 * allowList: Command -> Command (unchanged, or refused before any SQL exists).
 * - Data routes: with `allow_list_path`, a request whose query pattern is not on the list is 403
 *   QUERY_NOT_ALLOWED. The pattern is spelled in the grammar of the door the request came through
 *   (its `pattern`, given here at construction: allow-list lines are written in that grammar), so
 *   this stage compares patterns and knows no grammar.
 * - Function calls: with `rpc_allowlist_path`, a function not on the list is 403 RPC_NOT_ALLOWED,
 *   and /_rpc/contracts lists only the allowed ones (a client is not told about what it may not call).
 *   A read naming a computed field calls its function too: the same rule applies to it.
 */
import type { Command } from '../../command/command';
import { addReadNode } from '../../command/read-columns';
import { GatewayError } from '../../errors/gateway-error';
import type { CommandContext, Stages } from '../../pipeline/stage-types';
import type { FunctionAllowList } from './function-allow-list';
import type { QueryAllowList } from './query-allow-list';

/** A command's query pattern in its door's grammar, undefined for one without a pattern (lib/pipeline/door.ts, `pattern`). */
export type QueryPatternOf = (command: Command) => string | undefined;

export function createAllowListStage(lists: { queries?: QueryAllowList; functions?: FunctionAllowList; patternOf?: QueryPatternOf } = {}): Stages['allowList'] {
  const { queries, functions, patternOf } = lists;
  // Fail closed at construction: a query allow-list with nothing to spell patterns would refuse, or pass, every request.
  if (queries !== undefined && patternOf === undefined) throw new Error('createAllowListStage: a query allow-list needs the door\'s patternOf');
  return function allowList(ctx: CommandContext): Command {
    const { command } = ctx;
    if (command.kind === 'rpc' || command.kind === 'contracts') {
      if (functions === undefined) return command;
      if (command.kind === 'rpc' && !functions.allows(command.fn)) {
        throw new GatewayError('RPC_NOT_ALLOWED', `The function \`${command.fn.schema}.${command.fn.name}\` is not on the function allow-list.`);
      }
      if (command.kind === 'contracts') return Object.freeze({ ...command, functions: Object.freeze(command.functions.filter((f) => functions.allows(f))) });
      return command;
    }
    if (functions !== undefined && command.kind === 'read') {
      addReadNode((_table, columns) => {
        for (const c of columns) {
          if (c.computed !== undefined && !functions.allows(c.computed.fn)) {
            throw new GatewayError('RPC_NOT_ALLOWED', `The function \`${c.computed.schema}.${c.computed.name}\` (a computed field) is not on the function allow-list.`);
          }
        }
      }, command.root);
    }
    if (queries === undefined) return command;
    // Only function calls have no pattern (handled above).
    const pattern = patternOf!(command)!;
    if (!queries.allows(pattern)) {
      throw new GatewayError('QUERY_NOT_ALLOWED', 'This query pattern is not on the allow-list.', { details: { pattern } });
    }
    return command;
  };
}
