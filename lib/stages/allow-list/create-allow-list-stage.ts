/**
 * allowList: Command -> Command (unchanged, or refused before any SQL exists).
 * - Data routes: with `allow_list_path`, a request whose query pattern (query-pattern.ts) is not
 *   on the list is 403 QUERY_NOT_ALLOWED.
 * - Function calls: with `rpc_allowlist_path`, a function not on the list is 403 RPC_NOT_ALLOWED,
 *   and /_rpc/contracts lists only the allowed ones (a client is not told about what it may not call).
 */
import type { Command } from '../../command/command';
import { GatewayError } from '../../errors/gateway-error';
import type { CommandContext, Stages } from '../../pipeline/stage-types';
import type { FunctionAllowList } from './function-allow-list';
import type { QueryAllowList } from './query-allow-list';
import { queryPattern } from './query-pattern';

export function createAllowListStage(lists: { queries?: QueryAllowList; functions?: FunctionAllowList } = {}): Stages['allowList'] {
  const { queries, functions } = lists;
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
    if (queries === undefined) return command;
    const pattern = queryPattern(command)!;
    if (!queries.allows(pattern)) {
      throw new GatewayError('QUERY_NOT_ALLOWED', 'This query pattern is not on the allow-list.', { details: { pattern } });
    }
    return command;
  };
}
