/**
 * The `auth` stage (gateway spec "Authentication", contract §5).
 *
 * In:  the GatewayRequest's `authorization` header (RFC 6750 §2.1, scheme case-insensitive), or,
 *      when `jwt_cookie` is set and there is no such header, that cookie; in dev mode, on loopback
 *      connections without a token, the `x-user-id` / `x-user-role` / `x-tenant-id` headers.
 * Out: a frozen Identity (source 'jwt', 'dev-headers' or 'anonymous').
 * Never: accept `alg: none` or an algorithm outside `jwt_algorithms`; verify an HMAC token with a
 * public key or the reverse; let a present-but-invalid token fall back to dev headers or anonymous;
 * tell the caller which check a token failed (one generic message; the jsonwebtoken error is only
 * the `cause`, which is never rendered); put the secret or key material in an error.
 *
 * All key material is built once here: jsonwebtoken given a string secret re-parses it into a
 * KeyObject on every verify, which halves throughput.
 */
import { createPublicKey, createSecretKey, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import jwt from 'jsonwebtoken';
import type { ResolvedConfig } from '../../config/resolved-config';
import { GatewayConfigError } from '../../errors/gateway-config-error';
import { GatewayError } from '../../errors/gateway-error';
import type { GatewayRequest } from '../../http/gateway-request';
import type { Stages } from '../stage-types';
import { claimsToIdentity, invalidTokenError } from './claims-to-identity';
import { devHeadersIdentity } from './dev-headers';
import { anonymousIdentity } from './identity';

/** Longer tokens are refused before any parsing or signature work. */
export const maxTokenLength = 8192;

const hmacAlgorithm = /^HS(?:256|384|512)$/;
/** What jsonwebtoken 9 (jwa) can verify with a public key; it has no EdDSA. */
const publicKeyAlgorithm = /^(?:RS|PS|ES)(?:256|384|512)$/;
/** RFC 7518 §3.4: each ES algorithm fixes the curve. */
const curveOfEs: Readonly<Record<string, string>> = { ES256: 'prime256v1', ES384: 'secp384r1', ES512: 'secp521r1' };

interface Verifier {
  readonly key: KeyObject;
  /** Only algorithms of the key's own family, so HS/RS confusion cannot happen. */
  readonly algorithms: jwt.Algorithm[];
}

export function createAuthStage(config: ResolvedConfig): Stages['auth'] {
  const verifiers = buildVerifiers(config);
  const verifyOptions = {
    audience: audienceOption(config.jwtAudience),
    issuer: config.jwtIssuer || undefined,
    clockTolerance: config.jwtClockSkewS,
  };
  const cookieName = config.jwtCookie || undefined;

  function verify(token: string): ReturnType<typeof claimsToIdentity> {
    if (token.length > maxTokenLength) throw invalidTokenError();
    const verifier = verifiers.length === 1 ? verifiers[0] : verifiers.find((v) => v.algorithms.includes(headerAlg(token) as jwt.Algorithm));
    if (verifier === undefined) throw invalidTokenError();
    let payload: unknown;
    try {
      payload = jwt.verify(token, verifier.key, { ...verifyOptions, algorithms: verifier.algorithms });
    } catch (error) {
      throw invalidTokenError(error);
    }
    return claimsToIdentity(payload, config);
  }

  return (ctx) => {
    const token = readToken(ctx.request, cookieName);
    if (token !== undefined) return verify(token);
    const devIdentity = devHeadersIdentity(ctx.request, config);
    if (devIdentity !== undefined) return devIdentity;
    if (config.requireAuth) {
      throw new GatewayError('UNAUTHORIZED', 'Authentication is required.', { headers: { 'WWW-Authenticate': 'Bearer' } });
    }
    return anonymousIdentity;
  };
}

/**
 * The token of the request, or undefined when it carries none. An Authorization header that is
 * present but not a usable Bearer credential is a 401, never "no credentials". An empty token
 * cookie counts as absent (that is how browsers are told to forget a cookie).
 */
function readToken(request: GatewayRequest, cookieName: string | undefined): string | undefined {
  const header = request.headers['authorization'];
  if (header === undefined) {
    if (cookieName === undefined) return undefined;
    const token = readCookie(request.headers['cookie'], cookieName);
    return token === '' ? undefined : token;
  }
  const trimmed = header.trim();
  const space = trimmed.search(/\s/);
  const scheme = space === -1 ? trimmed : trimmed.slice(0, space);
  if (scheme.toLowerCase() !== 'bearer') {
    throw new GatewayError('UNAUTHORIZED', 'The Authorization header must use the Bearer scheme.', {
      headers: { 'WWW-Authenticate': 'Bearer' },
    });
  }
  const token = space === -1 ? '' : trimmed.slice(space).trim();
  if (token === '') {
    throw new GatewayError('UNAUTHORIZED', 'The Authorization header carries no bearer token.', {
      headers: { 'WWW-Authenticate': 'Bearer error="invalid_request"' },
    });
  }
  return token;
}

/** The first cookie called `name` in a `Cookie` header (RFC 6265 §5.4), quotes and %-escapes removed. */
function readCookie(header: string | undefined, name: string): string | undefined {
  if (header === undefined) return undefined;
  for (const pair of header.split(';')) {
    const eq = pair.indexOf('=');
    if (eq === -1 || pair.slice(0, eq).trim() !== name) continue;
    let value = pair.slice(eq + 1).trim();
    if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1);
    try {
      return decodeURIComponent(value);
    } catch {
      return value; // not %-encoded after all; verification decides
    }
  }
  return undefined;
}

/** The `alg` of the token header; only consulted to pick between a secret and a public key. */
function headerAlg(token: string): string | undefined {
  const dot = token.indexOf('.');
  if (dot <= 0) return undefined;
  try {
    const header: unknown = JSON.parse(Buffer.from(token.slice(0, dot), 'base64url').toString('utf8'));
    return typeof header === 'object' && header !== null && 'alg' in header && typeof header.alg === 'string' ? header.alg : undefined;
  } catch {
    return undefined;
  }
}

function audienceOption(audience: ResolvedConfig['jwtAudience']): string | [string, ...string[]] | undefined {
  if (typeof audience === 'string') return audience === '' ? undefined : audience;
  const [first, ...rest] = audience ?? [];
  return first === undefined ? undefined : [first, ...rest];
}

/**
 * One verifier per configured key: the secret for the HS* algorithms of `jwt_algorithms`, the
 * public key for the RS/PS/ES ones. With no key at all there is no verifier and every token is a
 * 401 (dev headers and anonymous access still work).
 */
function buildVerifiers(config: ResolvedConfig): Verifier[] {
  const algorithms = [...(config.jwtAlgorithms ?? ['HS256'])];
  if (algorithms.length === 0) {
    throw new GatewayConfigError('jwt_algorithms is empty; list the algorithms your token issuer signs with, e.g. ["HS256"] (the default).', 'jwt_algorithms');
  }
  for (const alg of algorithms) {
    if (alg.toLowerCase() === 'none') {
      throw new GatewayConfigError('jwt_algorithms must not contain "none": unsigned tokens would be accepted from anyone; remove it.', 'jwt_algorithms');
    }
    if (!hmacAlgorithm.test(alg) && !publicKeyAlgorithm.test(alg)) {
      throw new GatewayConfigError(
        `jwt_algorithms: unsupported algorithm "${alg}"; use HS256/HS384/HS512 with jwt_secret, or RS*/PS*/ES* (256/384/512) with jwt_public_key_path (EdDSA is not supported).`,
        'jwt_algorithms',
      );
    }
  }
  const hmac = algorithms.filter((alg) => hmacAlgorithm.test(alg)) as jwt.Algorithm[];
  const asymmetric = algorithms.filter((alg) => publicKeyAlgorithm.test(alg)) as jwt.Algorithm[];
  const secret = config.jwtSecret ? createSecretKey(Buffer.from(config.jwtSecret, 'utf8')) : undefined;
  const publicKey = config.jwtPublicKeyPath ? readPublicKey(config.jwtPublicKeyPath) : undefined;

  if (config.devMode && secret === undefined) {
    throw new GatewayConfigError('dev mode (GW_DEV_MODE=true) requires JWT_SECRET (jwt_secret) to be set; set it or turn dev mode off.', 'jwt_secret');
  }
  if (hmac.length > 0 && secret === undefined && (publicKey !== undefined || config.jwksUrl)) {
    throw new GatewayConfigError(
      `jwt_algorithms lists ${hmac.join(', ')}, which needs jwt_secret (JWT_SECRET), but only a public key is configured; set jwt_algorithms to your issuer's algorithm, e.g. ["RS256"].`,
      'jwt_algorithms',
    );
  }
  if (asymmetric.length > 0 && publicKey === undefined && !config.jwksUrl) {
    throw new GatewayConfigError(
      `jwt_algorithms lists ${asymmetric.join(', ')}, which needs a public key; set jwt_public_key_path to the issuer's PEM public key, or use jwt_algorithms = ["HS256"] with JWT_SECRET.`,
      'jwt_algorithms',
    );
  }
  if (publicKey !== undefined && asymmetric.length === 0) {
    throw new GatewayConfigError(
      `jwt_public_key_path is set but jwt_algorithms lists only ${hmac.join(', ')}; set jwt_algorithms to the algorithm of that key, e.g. ["RS256"] or ["ES256"].`,
      'jwt_algorithms',
    );
  }
  if (publicKey !== undefined) for (const alg of asymmetric) checkKeyFitsAlgorithm(publicKey, alg);

  const verifiers: Verifier[] = [];
  if (secret !== undefined && hmac.length > 0) verifiers.push(Object.freeze({ key: secret, algorithms: hmac }));
  if (publicKey !== undefined) verifiers.push(Object.freeze({ key: publicKey, algorithms: asymmetric }));
  return verifiers;
}

function readPublicKey(path: string): KeyObject {
  let pem: Buffer;
  try {
    pem = readFileSync(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'unreadable';
    throw new GatewayConfigError(`jwt_public_key_path: cannot read ${JSON.stringify(path)} (${code}); point it at a readable PEM public key file.`, 'jwt_public_key_path');
  }
  try {
    const key = createPublicKey(pem);
    if (key.type !== 'public') throw new Error('not a public key');
    return key;
  } catch {
    throw new GatewayConfigError(
      `jwt_public_key_path: ${JSON.stringify(path)} does not hold a PEM public key ("-----BEGIN PUBLIC KEY-----"); export the issuer's public key into it.`,
      'jwt_public_key_path',
    );
  }
}

function checkKeyFitsAlgorithm(key: KeyObject, alg: string): void {
  const type = key.asymmetricKeyType;
  const fits = alg.startsWith('ES')
    ? type === 'ec' && key.asymmetricKeyDetails?.namedCurve === curveOfEs[alg]
    : type === 'rsa' || (type === 'rsa-pss' && alg.startsWith('PS'));
  if (!fits) {
    const curve = key.asymmetricKeyDetails?.namedCurve;
    throw new GatewayConfigError(
      `jwt_algorithms lists ${alg}, but the key in jwt_public_key_path is ${type ?? 'unknown'}${curve ? ` (${curve})` : ''}; list the algorithm that matches the key (RS*/PS* for RSA, ES256/ES384/ES512 for P-256/P-384/P-521).`,
      'jwt_algorithms',
    );
  }
}
