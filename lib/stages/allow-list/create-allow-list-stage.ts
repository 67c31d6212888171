/**
 * allowList: Command -> Command (unchanged, or QUERY_NOT_ALLOWED).
 * Query-pattern allow-lists arrive with their own issue; until then this stage passes the
 * command through and `createGateway` refuses `allow_list_path` rather than ignore it (fail closed).
 */
import type { Command } from '../../command/command';
import type { CommandContext, Stages } from '../stage-types';

export function createAllowListStage(): Stages['allowList'] {
  return function allowList(ctx: CommandContext): Command {
    return ctx.command;
  };
}
