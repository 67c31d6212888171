/**
 * The issuer's public keys from a JWKS URL (`jwks_url`, RFC 7517 §5).
 *
 * Transport and caching are ours, key selection is jose's (`createLocalJWKSet`: `kid`, `alg`,
 * `kty`, `use` and `key_ops` matching, JWK import):
 * - fetched on first use with a timeout over the whole response (`jwks_timeout_ms`), at most
 *   1 MiB, no redirects; concurrent requests share one fetch;
 * - cached for `jwks_cache_s`, then fetched again before the next verification;
 * - a token whose `kid` is not in the set triggers one refetch (key rotation), at most once per
 *   `jwks_cooldown_s`, so a flood of made-up `kid`s cannot make us hammer the issuer;
 * - fail closed: when the keys cannot be fetched (or the cache expired and the refetch failed),
 *   verification fails with `KeySetUnavailableError` (503), never with a stale or no check.
 */
import { createLocalJWKSet, errors, type FlattenedJWSInput, type JWSHeaderParameters, type KeyLike } from 'jose';

export const maxKeySetBytes = 1024 * 1024;

export interface RemoteKeySetOptions {
  readonly timeoutMs: number;
  readonly cacheMs: number;
  readonly cooldownMs: number;
  /** For tests: the clock. */
  readonly now?: () => number;
}

/** The keys could not be fetched: the token cannot be checked now (503, not 401). */
export class KeySetUnavailableError extends Error {
  constructor(reason: string, options?: { cause?: unknown }) {
    super(`JWKS unavailable: ${reason}`, options);
    this.name = 'KeySetUnavailableError';
  }
}

export type KeyResolver = (header: JWSHeaderParameters, token: FlattenedJWSInput) => Promise<KeyLike | Uint8Array>;

export interface RemoteKeySet {
  readonly resolve: KeyResolver;
  /** How many times the set was fetched (successfully or not); for metrics and tests. */
  readonly fetches: () => number;
  /** Changes whenever a fetched set replaces the keys: what was verified before may no longer verify. */
  readonly generation: () => number;
}

export function createRemoteKeySet(url: URL, options: RemoteKeySetOptions): RemoteKeySet {
  const now = options.now ?? Date.now;
  let local: ReturnType<typeof createLocalJWKSet> | undefined;
  let fetchedAt = Number.NEGATIVE_INFINITY;
  let attemptedAt = Number.NEGATIVE_INFINITY;
  let failedAt = Number.NEGATIVE_INFINITY;
  let pending: Promise<void> | undefined;
  let fetches = 0;
  let generation = 0;

  async function fetchKeys(): Promise<void> {
    attemptedAt = now();
    fetches++;
    let body: string;
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(options.timeoutMs), redirect: 'error', headers: { accept: 'application/json' } });
      if (response.status !== 200) throw new KeySetUnavailableError(`HTTP ${response.status}`);
      body = await readLimited(response, maxKeySetBytes);
    } catch (err) {
      if (err instanceof KeySetUnavailableError) throw err;
      throw new KeySetUnavailableError(err instanceof Error && err.name === 'TimeoutError' ? 'timeout' : 'fetch failed', { cause: err });
    }
    try {
      local = createLocalJWKSet(JSON.parse(body) as Parameters<typeof createLocalJWKSet>[0]);
    } catch (err) {
      throw new KeySetUnavailableError('not a JSON Web Key Set', { cause: err });
    }
    generation++;
    fetchedAt = now();
  }

  function reload(): Promise<void> {
    pending ??= fetchKeys()
      .catch((err: unknown) => {
        failedAt = now();
        throw err;
      })
      .finally(() => (pending = undefined));
    return pending;
  }

  const resolve: KeyResolver = async (header, token) => {
    if (local === undefined || now() - fetchedAt >= options.cacheMs) {
      // After a failed fetch, wait out the cooldown before trying again (503 meanwhile).
      if (pending === undefined && failedAt >= attemptedAt && now() - failedAt < options.cooldownMs) {
        throw new KeySetUnavailableError('last fetch failed; waiting for the cooldown');
      }
      await reload();
    }
    try {
      return await local!(header, token);
    } catch (err) {
      if (!(err instanceof errors.JWKSNoMatchingKey) || now() - attemptedAt < options.cooldownMs) throw err;
      await reload(); // a new kid: the issuer may have rotated its keys
      return local!(header, token);
    }
  };
  return Object.freeze({ resolve, fetches: () => fetches, generation: () => generation });
}

async function readLimited(response: Response, limit: number): Promise<string> {
  const declared = Number(response.headers.get('content-length'));
  if (declared > limit) throw new KeySetUnavailableError('response too large');
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (response.body === null) return '';
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength;
    if (size > limit) throw new KeySetUnavailableError('response too large');
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}
