/**
 * A source of GSSAPI security contexts: the system Kerberos library (`linux_krb5`), or one the
 * host passes in the `gss` option (`callback`, `custom`). In: a host-based target such as
 * postgres@db.example.com. Out: a context that makes one token per server challenge.
 * Never: acquires tickets (that is kinit's or a sidecar's job; docs/security.md).
 */
import type { GssProviderName } from '../connection-settings';
import type { GssContext, GssOptions } from './gss-options';

export interface GssProvider {
  readonly name: GssProviderName;
  start(target: string, mechanism: 'gssapi' | 'sspi'): Promise<GssContext>;
}

/** The provider of the `gss` option (`callback` or `custom`). */
export function optionProvider(option: GssOptions): GssProvider {
  switch (option.provider) {
    case 'callback':
      return {
        name: 'callback',
        start: async (target) => {
          const state: Record<string, unknown> = {};
          return { step: async (challenge) => option.token(target, challenge, state) ?? undefined };
        },
      };
    case 'custom':
      return { name: 'custom', start: async (target, mechanism) => option.createContext(target, mechanism) };
  }
}
