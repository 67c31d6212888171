/**
 * The keys that verify tokens, built once from the configuration (jwt_secret, jwt_public_key_path,
 * jwks_url, jwt_algorithms), with every mismatch refused when the gateway is created.
 *
 * Each algorithm family has its own key: HS256/384/512 the secret; RS, PS and ES (256/384/512)
 * and EdDSA the PEM public key or the JWKS. The resolver picks the key by the token's `alg` among `jwt_algorithms` only, and jose
 * checks again that the key type fits the algorithm, so `alg: none` and HS/RS confusion (an HS256
 * token "signed" with the public key) cannot verify.
 */
import { createPublicKey, createSecretKey, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { ResolvedConfig } from '../../pipeline/resolved-config';
import { GatewayConfigError } from '../../errors/gateway-config-error';
import { isLoopbackHost } from '../../http/loopback';
import { createRemoteKeySet, type KeyResolver, type RemoteKeySet } from './remote-key-set';

/** RFC 7518 §3.2: an HMAC key at least as long as the hash; 32 bytes for HS256. */
export const minSecretBytes = 32;

const hmacAlgorithm = /^HS(?:256|384|512)$/;
const publicKeyAlgorithm = /^(?:(?:RS|PS|ES)(?:256|384|512)|EdDSA)$/;
/** RFC 7518 §3.4: each ES algorithm fixes the curve. RFC 8037: EdDSA with Ed25519 or Ed448. */
const curveOfEs: Readonly<Record<string, string>> = { ES256: 'prime256v1', ES384: 'secp384r1', ES512: 'secp521r1' };

export interface TokenKeys {
  /** Exactly `jwt_algorithms`: what jose accepts in a token header. */
  readonly algorithms: readonly string[];
  /** The key for a token's header; throws for an algorithm with no key. */
  readonly resolve: KeyResolver;
  /** Present with `jwks_url`. */
  readonly remote: RemoteKeySet | undefined;
}

export class NoKeyForAlgorithmError extends Error {}

export function buildTokenKeys(config: ResolvedConfig): TokenKeys {
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
        `jwt_algorithms: unsupported algorithm "${alg}"; use HS256/HS384/HS512 with jwt_secret, or RS*/PS*/ES* (256/384/512) or EdDSA with jwt_public_key_path or jwks_url.`,
        'jwt_algorithms',
      );
    }
  }
  const hmac = algorithms.filter((alg) => hmacAlgorithm.test(alg));
  const asymmetric = algorithms.filter((alg) => publicKeyAlgorithm.test(alg));
  const secret = config.jwtSecret ? secretKey(config.jwtSecret) : undefined;
  const publicKey = config.jwtPublicKeyPath ? readPublicKey(config.jwtPublicKeyPath) : undefined;
  const remote = config.jwksUrl ? remoteKeySet(config) : undefined;

  if (config.devMode && secret === undefined) {
    throw new GatewayConfigError('dev mode (GW_DEV_MODE=true) requires JWT_SECRET (jwt_secret) to be set; set it or turn dev mode off.', 'jwt_secret');
  }
  if (publicKey !== undefined && remote !== undefined) {
    throw new GatewayConfigError('jwt_public_key_path and jwks_url are both set; use one source of public keys (jwks_url when the issuer rotates keys).', 'jwks_url');
  }
  if (hmac.length > 0 && secret === undefined && (publicKey !== undefined || remote !== undefined)) {
    throw new GatewayConfigError(
      `jwt_algorithms lists ${hmac.join(', ')}, which needs jwt_secret (JWT_SECRET), but only public keys are configured; set jwt_algorithms to your issuer's algorithm, e.g. ["RS256"].`,
      'jwt_algorithms',
    );
  }
  if (asymmetric.length > 0 && publicKey === undefined && remote === undefined) {
    throw new GatewayConfigError(
      `jwt_algorithms lists ${asymmetric.join(', ')}, which needs a public key; set jwt_public_key_path to the issuer's PEM public key or jwks_url to its JWKS, or use jwt_algorithms = ["HS256"] with JWT_SECRET.`,
      'jwt_algorithms',
    );
  }
  if ((publicKey !== undefined || remote !== undefined) && asymmetric.length === 0) {
    const source = publicKey !== undefined ? 'jwt_public_key_path' : 'jwks_url';
    throw new GatewayConfigError(
      `${source} is set but jwt_algorithms lists only ${hmac.join(', ')}; set jwt_algorithms to the algorithm of the issuer's keys, e.g. ["RS256"], ["ES256"] or ["EdDSA"].`,
      'jwt_algorithms',
    );
  }
  if (publicKey !== undefined) for (const alg of asymmetric) checkKeyFitsAlgorithm(publicKey, alg);
  // Without any key no token can verify, so with require_auth every request would be a 401: a
  // gateway that starts and refuses everyone hides a missing JWT_SECRET until the first request.
  if (config.requireAuth && secret === undefined && publicKey === undefined && remote === undefined) {
    throw new GatewayConfigError(
      'require_auth is on (the default) but no key to verify tokens is configured, so every request would get 401: set env JWT_SECRET ' +
        '(or jwt_secret / the jwtSecret option) for HS256 tokens, or jwt_public_key_path or jwks_url for RS*/PS*/ES*/EdDSA tokens; ' +
        'or set require_auth = false to serve anonymous callers only.',
      'jwt_secret',
    );
  }

  const resolve: KeyResolver = async (header, token) => {
    const alg = header.alg ?? '';
    if (hmacAlgorithm.test(alg) && secret !== undefined) return secret;
    if (publicKeyAlgorithm.test(alg)) {
      if (publicKey !== undefined) return publicKey;
      if (remote !== undefined) return remote.resolve(header, token);
    }
    throw new NoKeyForAlgorithmError(alg);
  };
  return Object.freeze({ algorithms: Object.freeze(algorithms), resolve, remote });
}

function secretKey(secret: string): KeyObject {
  const bytes = Buffer.from(secret, 'utf8');
  if (bytes.length < minSecretBytes) {
    throw new GatewayConfigError(
      `jwt_secret (JWT_SECRET) is ${bytes.length} bytes; at least ${minSecretBytes} are required for HMAC tokens (RFC 7518 §3.2). Generate one with \`openssl rand -base64 32\`.`,
      'jwt_secret',
    );
  }
  // Built once: a string secret would be re-imported on every verification.
  return createSecretKey(bytes);
}

function remoteKeySet(config: ResolvedConfig): RemoteKeySet {
  const raw = config.jwksUrl!;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new GatewayConfigError(`jwks_url must be an absolute https:// URL, e.g. https://issuer.example/.well-known/jwks.json (got ${JSON.stringify(raw.slice(0, 200))}).`, 'jwks_url');
  }
  // Keys fetched over plain HTTP could be swapped by anyone on the path: only loopback may use it.
  const loopback = isLoopbackHost(url.hostname.replace(/^\[(.*)\]$/, '$1'));
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback)) {
    throw new GatewayConfigError(`jwks_url must use https:// (plain http:// is accepted only for a loopback host); got ${JSON.stringify(`${url.protocol}//${url.host}`)}.`, 'jwks_url');
  }
  return createRemoteKeySet(url, {
    timeoutMs: config.jwksTimeoutMs,
    cacheMs: config.jwksCacheS * 1000,
    cooldownMs: config.jwksCooldownS * 1000,
  });
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
  const fits =
    alg === 'EdDSA'
      ? type === 'ed25519' || type === 'ed448'
      : alg.startsWith('ES')
        ? type === 'ec' && key.asymmetricKeyDetails?.namedCurve === curveOfEs[alg]
        : type === 'rsa' || (type === 'rsa-pss' && alg.startsWith('PS'));
  if (!fits) {
    const curve = key.asymmetricKeyDetails?.namedCurve;
    throw new GatewayConfigError(
      `jwt_algorithms lists ${alg}, but the key in jwt_public_key_path is ${type ?? 'unknown'}${curve ? ` (${curve})` : ''}; list the algorithm that matches the key (RS*/PS* for RSA, ES256/ES384/ES512 for P-256/P-384/P-521, EdDSA for Ed25519/Ed448).`,
      'jwt_algorithms',
    );
  }
}
