/**
 * Runs the auth stage the way the pipeline does (it may return a promise) and captures its error.
 */
import jwt from 'jsonwebtoken';
import type { ResolvedConfig } from '../../../lib/pipeline/resolved-config';
import { GatewayError } from '../../../lib/errors/gateway-error';
import { createAuthStage } from '../../../lib/stages/auth/create-auth-stage';
import type { Identity } from '../../../lib/pipeline/identity';
import { testConfig } from './config-fixture';
import { testContext, testRequest } from './request-fixture';

export const secret = 'unit-test-secret-that-is-long-enough-for-hs256';

export function nowS(): number {
  return Math.floor(Date.now() / 1000);
}

export function sign(payload: object, options: jwt.SignOptions = {}, key: jwt.Secret = secret): string {
  return jwt.sign(payload, key, { algorithm: 'HS256', ...options });
}

export async function authenticate(
  headers: Record<string, string | undefined>,
  overrides: Partial<ResolvedConfig> = {},
  loopback = true,
): Promise<Identity> {
  const config = testConfig({ jwtSecret: secret, ...overrides });
  return await createAuthStage(config)(testContext(testRequest(headers, loopback), config));
}

/** The GatewayError the promise rejects with; fails the test when it resolves. */
export async function rejection(promise: Promise<unknown>): Promise<GatewayError> {
  let identity: unknown;
  try {
    identity = await promise;
  } catch (error) {
    if (error instanceof GatewayError) return error;
    throw error;
  }
  throw new Error(`expected a GatewayError, got identity ${JSON.stringify(identity)}`);
}

export function expectInvalidToken(error: GatewayError): void {
  expect(error.code).toBe('UNAUTHORIZED');
  expect(error.status).toBe(401);
  expect(error.message).toBe('The bearer token is invalid or expired.');
  expect(error.headers).toEqual({ 'WWW-Authenticate': 'Bearer error="invalid_token"' });
  expect(error.toJSON()).toEqual({ code: 'UNAUTHORIZED', message: 'The bearer token is invalid or expired.' });
}
