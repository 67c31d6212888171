/**
 * Who may use `GET /{table}/_explain` (docs/security.md, "What a tenant can learn about
 * other tenants' rows").
 * In: the parse context (identity, config). Out: nothing, or FORBIDDEN before any SQL.
 * Never: lets a caller that no setting names run EXPLAIN outside dev mode.
 * Checked in parse, where the route is recognised (beside explain_enabled), not in the policy
 * stage: a host that replaces the policy stage with its own must not open the route by doing so.
 *
 * Why a gate and not a filtered plan: EXPLAIN ANALYZE counts rows before row-level security's
 * filter removes them (`Rows Removed by Filter`, the actual and estimated rows of every node, the
 * buffers read), and its estimates come from table statistics over all tenants. With an index on
 * a column, those numbers tell a tenant how many of other tenants' rows match any predicate it
 * picks. Stripping every such number would leave little of a plan, so the route is for trusted
 * callers: a role in `explain_roles`, or any one scope in `explain_scopes`; everyone in dev mode
 * (a developer's own database); nobody otherwise.
 */
import { GatewayError } from '../../errors/gateway-error';
import type { ParseContext } from '../../pipeline/stage-types';

export function checkExplainAccess(ctx: ParseContext): void {
  const { identity, config } = ctx;
  if (config.devMode) return;
  const roles = config.explainRoles ?? [];
  const scopes = config.explainScopes ?? [];
  if (identity.role !== '' && roles.includes(identity.role)) return;
  if (identity.scopes.some((scope) => scopes.includes(scope))) return;
  throw new GatewayError('FORBIDDEN', 'This caller may not use the explain route.', {
    hint: "EXPLAIN ANALYZE row counts include other tenants' rows, so _explain is open only to the roles in explain_roles and the scopes in explain_scopes (and to everyone in dev mode).",
  });
}
