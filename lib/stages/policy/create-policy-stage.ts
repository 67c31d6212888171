/**
 * policy: Command -> Command (may only narrow it, or throw FORBIDDEN before any SQL exists).
 * The native [access] policy arrives with its own issue; until then this stage passes the
 * command through unchanged and `createGateway` refuses `[access] enabled = true` rather than
 * silently ignoring a policy it cannot enforce (fail closed).
 */
import type { Command } from '../../command/command';
import type { CommandContext, Stages } from '../stage-types';

export function createPolicyStage(): Stages['policy'] {
  return function policy(ctx: CommandContext): Command {
    return ctx.command;
  };
}
