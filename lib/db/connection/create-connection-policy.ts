/**
 * database_url (+ the `gss` option) -> what the gateway's pool needs: the pg Client class that
 * applies the connection policy, and the counters /metrics shows. Runs once, inside
 * createGateway, so every configuration problem (parameters, files, Kerberos preflight) is a
 * GatewayConfigError before anything starts. See docs/security.md, "Database connection policy".
 */
import type pg from 'pg';
import { GatewayConfigError } from '../../errors/gateway-config-error';
import { CircuitBreaker } from './circuit-breaker';
import type { ConnectionSettings } from './connection-settings';
import type { ConnectionStats } from './connection-stats';
import type { GssOptions } from './gss/gss-options';
import { optionProvider, type GssProvider } from './gss/gss-provider';
import { createKrb5Provider } from './gss/krb5-provider';
import { parseConnectionUrl } from './parse-connection-url';
import { createPolicyClient } from './policy-client';

export interface ConnectionPolicy {
  readonly settings: ConnectionSettings;
  readonly Client: typeof pg.Client;
  readonly stats: ConnectionStats;
}

export function createConnectionPolicy(databaseUrl: string, gss: GssOptions | undefined, env: NodeJS.ProcessEnv = process.env): ConnectionPolicy {
  checkGssOption(gss);
  const settings = parseConnectionUrl(databaseUrl, { env, ...(gss === undefined ? {} : { gssOptionProvider: gss.provider }) });
  let provider: GssProvider | undefined;
  switch (settings.gss.provider) {
    case undefined:
      break;
    case 'linux_krb5':
      provider = createKrb5Provider(env);
      break;
    case 'callback':
    case 'custom':
      provider = optionProvider(gss!);
      break;
  }
  const breaker = new CircuitBreaker({
    threshold: settings.gss.circuitThreshold,
    windowMs: settings.gss.circuitWindowMs,
    cooldownMs: settings.gss.circuitCooldownMs,
  });
  const counters = { gssRetries: 0, gssFailures: 0 };
  const stats: ConnectionStats = {
    get gssRetries() {
      return counters.gssRetries;
    },
    get gssFailures() {
      return counters.gssFailures;
    },
    get gssCircuitOpenings() {
      return breaker.openings;
    },
    get gssCircuitOpen() {
      return breaker.isOpen;
    },
  };
  return Object.freeze({ settings, Client: createPolicyClient(settings, { provider, breaker, counters }), stats });
}

function checkGssOption(gss: unknown): asserts gss is GssOptions | undefined {
  if (gss === undefined) return;
  const g = gss as { provider?: unknown; token?: unknown; createContext?: unknown } | null;
  const shape = "{ provider: 'callback', token: async (target, challenge, state) => token } or { provider: 'custom', createContext: (target, mechanism) => context }";
  if (typeof g !== 'object' || g === null) throw new GatewayConfigError(`option \`gss\` must be ${shape}`, 'gss');
  if (g.provider === 'callback' && typeof g.token === 'function') return;
  if (g.provider === 'custom' && typeof g.createContext === 'function') return;
  if (g.provider === 'linux_krb5') throw new GatewayConfigError('option `gss`: linux_krb5 needs no option; set gss_provider=linux_krb5 in database_url instead', 'gss');
  throw new GatewayConfigError(`option \`gss\` must be ${shape}`, 'gss');
}
