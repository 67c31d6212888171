/**
 * Errors of the connection policy at connect time (start-up errors are GatewayConfigError).
 * Their messages name the mechanism and the key involved and never a secret; to-gateway-error
 * maps both to 503 SERVICE_UNAVAILABLE.
 */

/** The policy refused what the server asked for, or a GSS exchange failed. */
export class ConnectionPolicyError extends Error {
  /** The URL key that decided, e.g. `auth_md5`, `channel_binding`, `gss_provider`. */
  readonly key: string | undefined;

  constructor(message: string, key?: string) {
    super(`database connection refused by the connection policy: ${message}`);
    this.name = 'ConnectionPolicyError';
    this.key = key;
  }
}

/** New connections are blocked while the GSS circuit is open (gss_circuit_*). */
export class GssCircuitOpenError extends Error {
  readonly retryAfterMs: number;

  constructor(retryAfterMs: number) {
    super(`GSS circuit open after repeated GSSAPI connection failures; new connections are blocked for ${Math.ceil(retryAfterMs / 1000)} s more`);
    this.name = 'GssCircuitOpenError';
    this.retryAfterMs = retryAfterMs;
  }
}
