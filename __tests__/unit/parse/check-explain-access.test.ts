/**
 * checkExplainAccess: _explain only for the roles in explain_roles, the scopes in explain_scopes,
 * or anybody in dev mode; FORBIDDEN for everyone else.
 */
import type { ResolvedConfig } from '../../../lib/pipeline/resolved-config';
import { GatewayError } from '../../../lib/errors/gateway-error';
import { anonymousIdentity, type Identity } from '../../../lib/pipeline/identity';
import { checkExplainAccess } from '../../../lib/doors/shared/check-explain-access';
import type { ParseContext } from '../../../lib/pipeline/stage-types';
import { testConfig } from '../auth/config-fixture';

const caller = (role: string, scopes: string[] = []): Identity => ({ ...anonymousIdentity, tenantId: 't', role, scopes, source: 'jwt' });
const ctx = (identity: Identity, config: Partial<ResolvedConfig>) => ({ identity, config: testConfig(config) }) as unknown as ParseContext;
const allowed = (identity: Identity, config: Partial<ResolvedConfig> = {}): boolean => {
  try {
    checkExplainAccess(ctx(identity, config));
    return true;
  } catch (error) {
    expect(error).toBeInstanceOf(GatewayError);
    expect([(error as GatewayError).code, (error as GatewayError).status]).toEqual(['FORBIDDEN', 403]);
    expect((error as GatewayError).hint).toContain('explain_roles');
    return false;
  }
};

describe('checkExplainAccess', () => {
  it('refuses everyone when nothing is configured', () => {
    expect(allowed(caller('admin', ['db:explain']))).toBe(false);
    expect(allowed(anonymousIdentity)).toBe(false);
    expect(allowed(caller('admin'), { explainRoles: [], explainScopes: [] })).toBe(false);
  });

  it('allows a role in explain_roles (exact, case-sensitive) and only that', () => {
    const config = { explainRoles: ['admin'] };
    expect(allowed(caller('admin'), config)).toBe(true);
    expect(allowed(caller('Admin'), config)).toBe(false);
    expect(allowed(caller('member', ['admin']), config)).toBe(false); // a scope is not a role
  });

  it('allows any one scope of explain_scopes', () => {
    const config = { explainScopes: ['db:explain', 'ops'] };
    expect(allowed(caller('member', ['read', 'ops']), config)).toBe(true);
    expect(allowed(caller('ops', ['read']), config)).toBe(false); // a role is not a scope
  });

  it('allows everyone in dev mode', () => {
    expect(allowed(anonymousIdentity, { devMode: true })).toBe(true);
    expect(allowed(caller('member'), { devMode: true })).toBe(true);
  });
});
