/** Who the caller is, as established by the `auth` stage. Immutable. */
export interface Identity {
  /** Empty string when the caller has no tenant. */
  readonly tenantId: string;
  readonly userId: string;
  readonly role: string;
  readonly agentId: string;
  readonly scopes: readonly string[];
  /** Every other claim of the token (including `operator_id`, which never becomes the tenant). */
  readonly claims: Readonly<Record<string, unknown>>;
  /** How the caller authenticated. */
  readonly source: 'jwt' | 'dev-headers' | 'anonymous';
}

export const anonymousIdentity: Identity = Object.freeze({
  tenantId: '',
  userId: '',
  role: '',
  agentId: '',
  scopes: Object.freeze([]) as readonly string[],
  claims: Object.freeze({}),
  source: 'anonymous',
});
