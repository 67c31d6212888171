/**
 * CORS for `tablegate serve` (`[gateway] cors_origins`), done by the `cors` package. In: a
 * configured origin, or the resolved config; out: the normalised origin, or the cors() options.
 * Never reflects an origin that is not listed, and never allows "*": requests carry an
 * Authorization header (or the jwt_cookie), so only the listed browser apps may read answers
 * (docs/security.md, "Browsers and CORS").
 */
import type { CorsOptions } from 'cors';
import type { ResolvedConfig } from '../pipeline/resolved-config';
import { readPrimaryHeader } from './read-primary-header';

/** Request headers a browser app may send: those the gateway reads (never the dev-mode headers). */
export const corsAllowedHeaders = ['Authorization', 'Content-Type', 'Prefer', 'X-Request-Id', readPrimaryHeader, 'x-gw-result-format', 'x-on-conflict', 'x-upsert'];
/** Response headers a browser app may read besides the CORS-safelisted ones. */
export const corsExposedHeaders = ['X-Request-Id', 'Retry-After', 'WWW-Authenticate', 'RateLimit-Policy', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'x-gw-query-pattern'];

export function corsOptions(config: ResolvedConfig): CorsOptions {
  return {
    // An exact list: cors reflects a request's Origin only when it is one of these, and adds Vary: Origin.
    origin: [...(config.corsOrigins ?? [])],
    methods: ['GET', 'HEAD', 'POST', 'PATCH', 'DELETE'],
    allowedHeaders: corsAllowedHeaders,
    exposedHeaders: corsExposedHeaders,
    // Cookies cross origins only when a cookie can carry the token.
    credentials: config.jwtCookie !== undefined,
    maxAge: 600,
  };
}
