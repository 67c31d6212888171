/**
 * The `auth` stage (docs/security.md, "Authentication").
 *
 * In:  the request's bearer token (header, or the `jwt_cookie` cookie; see read-token.ts); in dev
 *      mode, on loopback connections without a token, the `x-user-id` / `x-user-role` /
 *      `x-tenant-id` headers.
 * Out: a frozen Identity (source 'jwt', 'dev-headers' or 'anonymous').
 * Never: accept `alg: none` or an algorithm outside `jwt_algorithms`; verify an HMAC token with a
 * public key or the reverse; let a present-but-invalid token fall back to dev headers or anonymous;
 * tell the caller which check a token failed (one generic message; jose's error is only the
 * `cause`, which is never rendered); put the secret or key material in an error.
 *
 * Signatures and registered claims are checked by jose (`jwtVerify`): the algorithm against
 * `jwt_algorithms`, the key type against the algorithm, `crit`, `exp` and `nbf` with
 * `jwt_clock_skew_s`, `aud` and `iss` when configured. `iat` in the future (beyond the skew) is
 * checked here: jose checks it only together with a maximum token age.
 *
 * A token that verified is remembered with its Identity (verified-token-cache.ts,
 * `jwt_cache_max_entries` / `jwt_cache_max_lifetime_s`): the same token again, still within its
 * `exp` and verified by the same keys, gets the same Identity without another verification.
 */
import { jwtVerify, type JWTPayload } from 'jose';
import type { ResolvedConfig } from '../../pipeline/resolved-config';
import { GatewayError } from '../../errors/gateway-error';
import type { Stages } from '../../pipeline/stage-types';
import { claimsToIdentity, invalidTokenError } from './claims-to-identity';
import { devHeadersIdentity } from './dev-headers';
import { anonymousIdentity, type Identity } from '../../pipeline/identity';
import { readToken } from './read-token';
import { KeySetUnavailableError } from './remote-key-set';
import { buildTokenKeys } from './token-keys';
import { createVerifiedTokenCache } from './verified-token-cache';
import { verifyFailureReason } from './verify-failure-reason';

/** Longer tokens are refused before any parsing or signature work. */
export const maxTokenLength = 8192;

export function createAuthStage(config: ResolvedConfig): Stages['auth'] {
  const keys = buildTokenKeys(config);
  const skew = config.jwtClockSkewS;
  const verifyOptions = {
    algorithms: [...keys.algorithms],
    clockTolerance: skew,
    ...(audienceOption(config.jwtAudience) === undefined ? {} : { audience: audienceOption(config.jwtAudience) }),
    ...(config.jwtIssuer ? { issuer: config.jwtIssuer } : {}),
  };
  const cookieName = config.jwtCookie || undefined;
  const cache = createVerifiedTokenCache({ maxEntries: config.jwtCacheMaxEntries, maxLifetimeS: config.jwtCacheMaxLifetimeS, clockSkewS: skew });
  const keyGeneration = keys.remote === undefined ? () => 0 : keys.remote.generation;

  function identityOf(token: string): Identity | Promise<Identity> {
    if (cache === undefined) return verify(token);
    // Whole seconds, as jose reads the clock for `exp`.
    const cached = cache.get(token, Math.floor(Date.now() / 1000), keyGeneration());
    return cached ?? verify(token);
  }

  async function verify(token: string): Promise<Identity> {
    if (token.length > maxTokenLength) throw invalidTokenError('malformed_token');
    // Read before verifying: a JWKS fetched during the verification must not vouch for older keys' tokens.
    const generation = keyGeneration();
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, keys.resolve, verifyOptions));
    } catch (error) {
      if (error instanceof KeySetUnavailableError) {
        throw new GatewayError('SERVICE_UNAVAILABLE', "The token issuer's signing keys could not be fetched.", {
          headers: { 'Retry-After': String(config.jwksCooldownS) },
          hint: 'Retry later.',
          cause: error,
          reason: 'keys_unavailable',
        });
      }
      throw invalidTokenError(verifyFailureReason(error), error);
    }
    if (typeof payload.iat === 'number' && payload.iat > Date.now() / 1000 + skew) throw invalidTokenError('not_yet_valid');
    const identity = claimsToIdentity(payload, config);
    cache?.set(token, identity, typeof payload.exp === 'number' ? payload.exp : undefined, Math.floor(Date.now() / 1000), generation);
    return identity;
  }

  return (ctx) => {
    const token = readToken(ctx.request, cookieName);
    if (token !== undefined) return identityOf(token);
    const devIdentity = devHeadersIdentity(ctx.request, config);
    if (devIdentity !== undefined) return devIdentity;
    if (config.requireAuth) {
      throw new GatewayError('UNAUTHORIZED', 'Authentication is required.', { headers: { 'WWW-Authenticate': 'Bearer' }, reason: 'missing_credentials' });
    }
    return anonymousIdentity;
  };
}

function audienceOption(audience: ResolvedConfig['jwtAudience']): string | string[] | undefined {
  if (typeof audience === 'string') return audience === '' ? undefined : audience;
  return audience === undefined || audience.length === 0 ? undefined : [...audience];
}
