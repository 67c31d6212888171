/**
 * Which check a token failed, from jose's error (its `code`, and `claim` for a claim check), as a
 * word of lib/pipeline/auth-failure-reasons.ts. For the failure counter; the caller gets one
 * generic message (create-auth-stage.ts), except that a door may tell an expired token apart
 * (docs/postgrest-dialect.md, "Errors").
 * In: what `jwtVerify` threw. Out: a reason. Never: text taken from the token.
 */
import type { AuthFailureReason } from '../../pipeline/auth-failure-reasons';
import { NoKeyForAlgorithmError } from './token-keys';

export function verifyFailureReason(error: unknown): AuthFailureReason {
  if (error instanceof NoKeyForAlgorithmError) return 'algorithm_not_allowed';
  const { code, claim } = (error ?? {}) as { code?: unknown; claim?: unknown };
  switch (code) {
    case 'ERR_JWT_EXPIRED':
      return 'expired';
    case 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED':
      return 'bad_signature';
    case 'ERR_JOSE_ALG_NOT_ALLOWED':
      return 'algorithm_not_allowed';
    case 'ERR_JWKS_NO_MATCHING_KEY':
    case 'ERR_JWKS_MULTIPLE_MATCHING_KEYS':
      return 'unknown_key';
    case 'ERR_JWS_INVALID':
    case 'ERR_JWT_INVALID':
    case 'ERR_JOSE_NOT_SUPPORTED':
      return 'malformed_token';
    case 'ERR_JWT_CLAIM_VALIDATION_FAILED':
      if (claim === 'aud') return 'wrong_audience';
      if (claim === 'iss') return 'wrong_issuer';
      if (claim === 'nbf' || claim === 'iat') return 'not_yet_valid';
      return 'bad_claim';
    default:
      return 'other';
  }
}
