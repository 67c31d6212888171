/**
 * The key a request is counted under (docs/scaling-out.md#rate-limits): per caller and per route
 * kind. In: who called (the identity's source, tenant and user) and the command's kind, plus the
 * client address for callers the token does not name. Out: a bounded key such as
 * `t:<tenant>:u:<user>:list` or `ip:203.0.113.7:list`.
 * Never: request text other than these; an unbounded key (long claims are hashed); two callers on
 * one key by accident (each part is percent-encoded, so a `:` in a claim cannot forge a boundary);
 * one caller on two keys: a claim PostgreSQL reads as a UUID is keyed in the UUID's canonical form,
 * since `'{ABCD...}'::uuid` and `'abcd-...'::uuid` are the same tenant to row-level security.
 */
import { createHash } from 'node:crypto';
import { isIP } from 'node:net';
import { ipKeyGenerator } from 'express-rate-limit';

/** The fields of an Identity the key is made of. */
export interface RateLimitCaller {
  readonly source: 'jwt' | 'dev-headers' | 'anonymous';
  readonly tenantId: string;
  readonly userId: string;
}

/** Longest caller part kept as it is; longer ones (very long claims) are hashed to 64 hex digits. */
const maxCallerLength = 200;

/**
 * `ip` is Express's `req.ip` (which honours the app's `trust proxy` setting); IPv6 addresses are
 * counted per /56 subnet, as express-rate-limit does, since one client often holds a whole /64.
 * Behind `trust proxy`, `req.ip` comes from X-Forwarded-For: anything that is not an address is
 * counted under one shared `invalid` key rather than copied into the key.
 */
export function rateLimitKey(caller: RateLimitCaller, kind: string, ip: string | undefined): string {
  // A token without tenant and user names nobody: such callers are told apart by address, like anonymous ones.
  if (caller.source === 'anonymous' || (caller.tenantId === '' && caller.userId === '')) {
    return `ip:${addressPart(ip)}:${kind}`;
  }
  const who = `t:${encodeURIComponent(canonical(caller.tenantId))}:u:${encodeURIComponent(canonical(caller.userId))}`;
  if (who.length <= maxCallerLength) return `${who}:${kind}`;
  return `h:${createHash('sha256').update(who).digest('hex')}:${kind}`;
}

/**
 * A claim in any spelling PostgreSQL's uuid input accepts (upper case, braces, hyphens after any
 * group of four digits or none) -> the lower-case 8-4-4-4-12 form; anything else as it is.
 */
export function canonical(claim: string): string {
  if (!/^(\{(?:[0-9a-fA-F]{4}-?){7}[0-9a-fA-F]{4}\}|(?:[0-9a-fA-F]{4}-?){7}[0-9a-fA-F]{4})$/.test(claim)) return claim;
  const hex = claim.replace(/[{}-]/g, '').toLowerCase();
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

function addressPart(ip: string | undefined): string {
  if (ip === undefined || ip === '') return 'unknown';
  if (isIP(ip) === 0) return 'invalid';
  try {
    return ipKeyGenerator(ip);
  } catch {
    return 'invalid'; // e.g. an IPv6 address with a zone index the parser refuses
  }
}
