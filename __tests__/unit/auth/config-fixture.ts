/**
 * A complete ResolvedConfig with the documented defaults (contract §2), for unit tests that
 * need a config without going through `resolveConfig`. Pass overrides for what a test is about.
 */
import type { ResolvedConfig } from '../../../lib/config/resolved-config';

export function testConfig(overrides: Partial<ResolvedConfig> = {}): ResolvedConfig {
  return Object.freeze({
    databaseUrl: undefined,
    bind: '127.0.0.1:3000',
    schemas: ['public'],
    adminToken: undefined,
    allowListPath: undefined,
    policy: undefined,
    policyPath: undefined,
    rpcRequireSchemaQualified: false,
    rpcAllowlistPath: undefined,
    rpcSignatureCheck: false,
    requireAuth: true,
    defaultLimit: 100,
    maxLimit: 1000,
    maxRequestBodyBytes: 1048576,
    maxBatchSize: 1000,
    statementTimeoutMs: 30000,
    rateLimit: undefined,
    explainEnabled: true,
    explainRoles: undefined,
    explainScopes: undefined,
    jwtSecret: undefined,
    jwtAlgorithms: ['HS256'],
    jwtAudience: undefined,
    jwtIssuer: undefined,
    jwtClockSkewS: 30,
    jwtPublicKeyPath: undefined,
    jwksUrl: undefined,
    jwksTimeoutMs: 5000,
    jwksCacheS: 600,
    jwksCooldownS: 30,
    jwtCookie: undefined,
    requireTenant: false,
    allowRlsBypassRole: false,
    devMode: false,
    cursorSecret: undefined,
    searchConfig: undefined,
    poolMax: 10,
    poolConnectionTimeoutMs: 5000,
    preparedStatements: true,
    access: { enabled: false, path: undefined, policy: undefined },
    ...overrides,
  });
}
