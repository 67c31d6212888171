/**
 * Why the auth stage refused a request, as one word from a fixed list: the `reason` label of
 * `tablegate_auth_failures_total` (docs/architecture.md, "Metrics"). The caller is not told which
 * check failed (one generic message; a door may tell `expired` apart, which is only checked after
 * the signature verified: docs/postgrest-dialect.md, "Errors"); the operator's
 * metrics are.
 * In: the error the auth stage threw. Out: one of `authFailureReasons`.
 * Never: a word made from request text (a label value an attacker could invent).
 */
import { isGatewayError } from '../errors/gateway-error';

export const authFailureReasons = [
  /** No token, no dev headers, while require_auth is on. */
  'missing_credentials',
  /** An Authorization header that is not `Bearer <token>`. */
  'malformed_header',
  /** Not a compact JWS, unreadable header or payload, or over the length limit. */
  'malformed_token',
  /** The signature does not verify. */
  'bad_signature',
  /** The token's `alg` is not in jwt_algorithms. */
  'algorithm_not_allowed',
  /** No key of the JWKS matches the token's `kid` / `alg`. */
  'unknown_key',
  /** `exp` has passed. */
  'expired',
  /** `nbf` or `iat` is in the future. */
  'not_yet_valid',
  'wrong_audience',
  'wrong_issuer',
  /** An identity claim that is missing (tenant_id with require_tenant) or of the wrong type. */
  'bad_claim',
  /** Dev-mode identity headers that are unusable. */
  'bad_dev_headers',
  /** jwks_url could not be fetched (503). */
  'keys_unavailable',
  /** Anything else, e.g. an error from a replacement auth stage. */
  'other',
] as const;

export type AuthFailureReason = (typeof authFailureReasons)[number];

const known: ReadonlySet<string> = new Set(authFailureReasons);

/** The reason the auth stage put on its GatewayError; 'other' for anything else. */
export function authFailureReasonOf(err: unknown): AuthFailureReason {
  const reason = isGatewayError(err) ? err.reason : undefined;
  return reason !== undefined && known.has(reason) ? (reason as AuthFailureReason) : 'other';
}
