/**
 * allowList: Command -> Command (unchanged, or refused before any SQL exists).
 * Function calls: with `rpc_allowlist_path`, a function not on the list is 403 RPC_NOT_ALLOWED,
 * and /_rpc/contracts lists only the allowed ones (a client is not told about what it may not call).
 * Query-pattern allow-lists for the data routes arrive with their own issue; until then
 * `createGateway` refuses `allow_list_path` rather than ignore it (fail closed).
 */
import type { Command } from '../../command/command';
import { GatewayError } from '../../errors/gateway-error';
import type { CommandContext, Stages } from '../stage-types';
import type { FunctionAllowList } from './function-allow-list';

export function createAllowListStage(functions?: FunctionAllowList): Stages['allowList'] {
  return function allowList(ctx: CommandContext): Command {
    const { command } = ctx;
    if (functions === undefined) return command;
    if (command.kind === 'rpc' && !functions.allows(command.fn)) {
      throw new GatewayError('RPC_NOT_ALLOWED', `The function \`${command.fn.schema}.${command.fn.name}\` is not on the function allow-list.`);
    }
    if (command.kind === 'contracts') return Object.freeze({ ...command, functions: Object.freeze(command.functions.filter((f) => functions.allows(f))) });
    return command;
  };
}
