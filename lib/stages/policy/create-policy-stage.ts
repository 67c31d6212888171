/**
 * policy: Command -> Command (may only narrow it, or throw FORBIDDEN before any SQL exists).
 * Without `[access]` every command passes unchanged: tenant isolation is RLS's job either way;
 * the policy adds vertical permissions (which operations, which columns) per table.
 */
import type { Command } from '../../command/command';
import type { CommandContext, Stages } from '../stage-types';
import type { AccessPolicy } from './access-policy';
import { enforcePolicy } from './enforce-policy';

export function createPolicyStage(policy?: AccessPolicy): Stages['policy'] {
  return function policyStage(ctx: CommandContext): Command {
    return policy === undefined ? ctx.command : enforcePolicy(policy, ctx.identity, ctx.command);
  };
}
