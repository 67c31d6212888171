/**
 * Tokens already verified, and the Identity each gave (docs/security.md, "The verified-token
 * cache"): a client sends the same token with every request until it expires, so its signature,
 * its registered claims and its identity claims are checked once, not once per request (the
 * largest single cost of a small read, docs/performance.md). Other gateways keep the same cache
 * (docs/security.md).
 *
 * Why a hit is as good as a verification: the key is the whole token text (header, payload and
 * signature), so only the very token that verified can hit; what verification checked does not
 * change with time except `exp`, which a hit checks again with the same clock skew; the keys
 * that verified it are the same unless a JWKS was fetched since (`keyGeneration`), which makes
 * every older entry miss. An entry also ends after `maxLifetimeS`. Only tokens that verified are
 * stored: a bad token costs a full verification every time, as before.
 *
 * Bounded by `maxEntries` (each key at most 8 KiB, the longest token accepted); when full, the
 * oldest entry goes. A hit does not move its entry: re-inserting would keep the request's copy of
 * the token string alive in this long-lived map (see pipelined-transaction.ts's statement cache).
 */
import type { Identity } from '../../pipeline/identity';

export interface VerifiedTokenCacheOptions {
  /** 0: no cache. */
  readonly maxEntries: number;
  /** 0: no cache. */
  readonly maxLifetimeS: number;
  /** Seconds a token stays valid after its `exp` (`jwt_clock_skew_s`), as the verification allows. */
  readonly clockSkewS: number;
}

interface Entry {
  readonly identity: Identity;
  /** Epoch seconds from which the entry is no longer used. */
  readonly until: number;
  readonly keyGeneration: number;
}

export interface VerifiedTokenCache {
  /** The identity of a token that verified with the keys of `keyGeneration` and is still valid at `nowS`. */
  get(token: string, nowS: number, keyGeneration: number): Identity | undefined;
  /** Records a token that verified at `nowS`; `exp` is its claim (undefined: none). */
  set(token: string, identity: Identity, exp: number | undefined, nowS: number, keyGeneration: number): void;
  readonly size: () => number;
}

export function createVerifiedTokenCache(options: VerifiedTokenCacheOptions): VerifiedTokenCache | undefined {
  if (options.maxEntries === 0 || options.maxLifetimeS === 0) return undefined;
  const entries = new Map<string, Entry>();
  return {
    get(token, nowS, keyGeneration) {
      const entry = entries.get(token);
      if (entry === undefined) return undefined;
      if (nowS < entry.until && entry.keyGeneration === keyGeneration) return entry.identity;
      entries.delete(token);
      return undefined;
    },
    set(token, identity, exp, nowS, keyGeneration) {
      // Verification refuses a token once `exp <= now - skew` (whole seconds, as jose counts).
      const expiresAt = typeof exp === 'number' ? exp + options.clockSkewS : Number.POSITIVE_INFINITY;
      const until = Math.min(expiresAt, nowS + options.maxLifetimeS);
      if (!(until > nowS)) return;
      if (entries.size >= options.maxEntries && !entries.has(token)) entries.delete(entries.keys().next().value as string);
      entries.set(token, { identity, until, keyGeneration });
    },
    size: () => entries.size,
  };
}
