/**
 * allowList: Command -> Command (unchanged, or refused before any SQL exists).
 * - Data routes: with `allow_list_path`, a request whose query pattern is not on the list is 403
 *   QUERY_NOT_ALLOWED. The pattern is spelled in the grammar of the door the request came through
 *   (its `pattern`, given here at construction: allow-list lines are written in that grammar), so
 *   this stage compares patterns and knows no grammar.
 * - Function calls: with `rpc_allowlist_path`, a function not on the list is 403 RPC_NOT_ALLOWED,
 *   and /_rpc/contracts lists only the allowed ones (a client is not told about what it may not call).
 *   A read naming a computed field or embedding a computed relationship calls its function too:
 *   the same rule applies to it.
 */
import type { Command, ReadNode } from '../../command/command';
import { readFunctions } from '../../command/read-functions';
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
    // Computed fields and relationships call functions, in a read or in the rows a write or a call answers with.
    if (functions !== undefined) {
      for (const { fn, as } of readFunctions(...answerNodes(command))) {
        if (!functions.allows(fn)) throw new GatewayError('RPC_NOT_ALLOWED', `The function \`${fn.schema}.${fn.name}\` (a ${as}) is not on the function allow-list.`);
      }
    }
    if (command.kind === 'rpc' || command.kind === 'contracts') {
      if (functions === undefined) return command;
      if (command.kind === 'rpc' && !functions.allows(command.fn)) {
        throw new GatewayError('RPC_NOT_ALLOWED', `The function \`${command.fn.schema}.${command.fn.name}\` is not on the function allow-list.`);
      }
      if (command.kind === 'contracts') return Object.freeze({ ...command, functions: Object.freeze(command.functions.filter((f) => functions.allows(f))) });
      return command;
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

/** The read levels a command answers with: a read's, a write's representation, a call's rows. */
function answerNodes(command: Command): ReadNode[] {
  switch (command.kind) {
    case 'read':
      return [command.root];
    case 'insert':
    case 'update':
    case 'delete':
      return command.answer ? [command.answer.node] : [];
    case 'rpc':
      return command.answer?.read ? [command.answer.read.root] : [];
    default:
      return [];
  }
}
