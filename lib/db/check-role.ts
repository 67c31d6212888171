/**
 * Fail closed on a role that row-level security does not apply to: a superuser or a role with
 * BYPASSRLS sees every tenant's rows whatever the policies say (PostgreSQL docs §5.9).
 */
import type pg from 'pg';
import { GatewayConfigError } from '../errors/gateway-config-error';

/**
 * `allowSetting` says how to turn the check off (`allow_rls_bypass_role = true` or the
 * `allowRlsBypassRole: true` option), in the spelling the caller configures the gateway with.
 */
export async function checkRole(pool: pg.Pool, allowBypass: boolean, allowSetting: string): Promise<void> {
  const { rows } = await pool.query<{ rolname: string; rolsuper: boolean; rolbypassrls: boolean }>(
    'SELECT rolname, rolsuper, rolbypassrls FROM pg_catalog.pg_roles WHERE rolname = current_user',
  );
  const role = rows[0];
  if (!role || (!role.rolsuper && !role.rolbypassrls)) return;
  const what = role.rolsuper ? 'is a superuser' : 'has the BYPASSRLS attribute';
  if (allowBypass) {
    console.warn(`tablegate: WARNING: database role "${role.rolname}" ${what}; row-level security does not apply to it (allowed by ${allowSetting}).`);
    return;
  }
  throw new GatewayConfigError(
    `database role "${role.rolname}" ${what}, so row-level security would not isolate tenants; connect as a role with NOSUPERUSER NOBYPASSRLS (or set ${allowSetting} to accept the risk)`,
    'database_url',
  );
}
