/**
 * policy: Command -> Command (may only narrow it, or throw FORBIDDEN before any SQL exists).
 * The native [access] policy, then the legacy YAML policy, when configured: a request must pass
 * both, and each may only narrow what the other left. Without either, every command passes
 * unchanged: tenant isolation is RLS's job either way; policies add vertical permissions.
 */
import type { Command } from '../../command/command';
import type { CommandContext, Stages } from '../../pipeline/stage-types';
import { accessPermit } from './access-permit';
import type { AccessPolicy } from './access-policy';
import { enforcePolicy } from './enforce-policy';
import { legacyPermit } from './legacy-permit';
import { scopeToTenant } from './scope-to-tenant';
import type { LegacyPolicy } from './legacy-policy';

/**
 * `tenantColumn` (docs/citus.md): after the policies, every level is narrowed to the caller's
 * tenant (scope-to-tenant.ts). Unset: the stage is the policies alone, as before.
 */
export function createPolicyStage(policies: { access?: AccessPolicy; legacy?: LegacyPolicy; tenantColumn?: string } = {}): Stages['policy'] {
  const { access, legacy, tenantColumn } = policies;
  const policyStage = function policyStage(ctx: CommandContext): Command {
    let command = ctx.command;
    if (access) command = enforcePolicy(accessPermit(access, ctx.identity), command);
    if (legacy) command = enforcePolicy(legacyPermit(legacy, ctx.identity), command);
    return command;
  };
  if (tenantColumn === undefined) return policyStage;
  return function tenantScopedPolicyStage(ctx: CommandContext): Command {
    return scopeToTenant(policyStage(ctx), tenantColumn, ctx.identity.tenantId);
  };
}
