/**
 * The pg Client class that the gateway's pool creates: node-postgres' Client, built from the
 * validated settings (never from raw URL parameters), on a PolicyConnection, behind the GSS
 * circuit. In: ConnectionSettings and the shared runtime (GSS provider, circuit, counters).
 * Out: a Client subclass for pg-pool's `Client` option. Never: opens a socket while the circuit
 * is open.
 */
import pg from 'pg';
import type { GatePolicy } from './auth-gate';
import type { CircuitBreaker } from './circuit-breaker';
import type { ConnectionSettings } from './connection-settings';
import { GssExchange } from './gss/gss-exchange';
import type { GssProvider } from './gss/gss-provider';
import { PolicyConnection } from './policy-connection';
import { tlsConnectionOptions } from './tls-options';

export interface PolicyRuntime {
  readonly provider: GssProvider | undefined;
  readonly breaker: CircuitBreaker;
  readonly counters: { gssRetries: number; gssFailures: number };
}


export function createPolicyClient(settings: ConnectionSettings, runtime: PolicyRuntime): typeof pg.Client {
  const policy: GatePolicy = {
    auth: settings.auth,
    channelBinding: settings.channelBinding,
    startGss: (mechanism) => {
      if (runtime.provider === undefined) {
        return `the server asked for ${mechanism === 'sspi' ? 'SSPI' : 'GSSAPI'} authentication, but no GSS provider is configured: set gss_provider=linux_krb5 in database_url, or pass the gss option (provider callback or custom)`;
      }
      return new GssExchange(runtime.provider, settings.gss.target, mechanism, {
        retries: settings.gss.connectRetries,
        baseMs: settings.gss.retryBaseMs,
        onRetry: () => void runtime.counters.gssRetries++,
      });
    },
  };

  class PolicyClient extends pg.Client {
    private readonly policyConnection: PolicyConnection;

    constructor(poolConfig: pg.ClientConfig = {}) {
      const ssl = tlsConnectionOptions(settings.tls);
      // The URL's keepalives parameter, else what the caller asks for (the LISTEN connection asks for it).
      const keepAlive = settings.keepAlive ?? poolConfig.keepAlive ?? false;
      const keepAliveInitialDelayMillis = settings.keepAliveIdleMs ?? 0;
      const connection = new PolicyConnection(
        { ssl, sslNegotiation: settings.tls.negotiation, keepAlive, keepAliveInitialDelayMillis, encoding: 'utf8' },
        policy,
        settings.tls.mode === 'prefer',
        { retries: settings.gss.connectRetries, baseMs: settings.gss.retryBaseMs, onRetry: () => void runtime.counters.gssRetries++ },
      );
      const config: Record<string, unknown> = {
        host: settings.host,
        port: settings.port,
        user: settings.user,
        database: settings.database,
        // A name the gateway gives a connection of its own (the LISTEN one) wins over the URL's.
        application_name: poolConfig.application_name ?? settings.applicationName ?? 'tablegate',
        fallback_application_name: settings.fallbackApplicationName,
        options: settings.options,
        ssl,
        // Both the Client (whether to send SSLRequest) and the Connection read the negotiation.
        sslnegotiation: settings.tls.negotiation,
        keepAlive,
        keepAliveInitialDelayMillis,
        connection,
        // pg then picks SCRAM-SHA-256-PLUS whenever the server offers it over TLS.
        enableChannelBinding: settings.channelBinding !== 'disable',
        connectionTimeoutMillis: settings.connectTimeoutMs ?? poolConfig.connectionTimeoutMillis,
      };
      // pg hides the password itself (non-enumerable on the client); undefined lets pg read PGPASSWORD.
      if (settings.password !== undefined) config['password'] = settings.password;
      super(config as pg.ClientConfig);
      this.policyConnection = connection;
    }

    override connect(): Promise<pg.Client>;
    override connect(callback: ((err: Error) => void) | ((err: null, c: pg.Client) => void)): void;
    override connect(given?: unknown): Promise<pg.Client> | void {
      const callback = given as ((err: Error | null) => void) | undefined;
      if (callback === undefined) {
        return new Promise<pg.Client>((resolve, reject) => this.connect((err: Error | null) => (err ? reject(err) : resolve(this))));
      }
      let trial: boolean;
      try {
        trial = runtime.breaker.admit();
      } catch (err) {
        process.nextTick(callback, err as Error);
        return;
      }
      super.connect((err: Error | null) => {
        const outcome = !this.policyConnection.gate.gssStarted ? 'neutral' : err ? 'failure' : 'success';
        if (outcome === 'failure') runtime.counters.gssFailures++;
        runtime.breaker.settle(outcome, trial);
        callback(err);
      });
    }
  }
  return PolicyClient;
}
