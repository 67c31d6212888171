/**
 * The usual integration-test set-up: a fresh test database, a gateway on it as the RLS-bound app
 * role (HS256 with TEST_JWT_SECRET), and an Express app with the gateway at /api.
 */
import express from 'express';
import { createGateway, type Gateway, type GatewayOptions } from '../../lib';
import { createTestDatabase, signToken, TENANT_A, TENANT_B, TEST_JWT_SECRET, type TestDatabase } from './test-database';

export interface GatewayApp {
  readonly db: TestDatabase;
  readonly gateway: Gateway;
  readonly app: express.Express;
}

export async function startGatewayApp(options: Partial<GatewayOptions> = {}): Promise<GatewayApp> {
  const db = await createTestDatabase();
  const gateway = createGateway({ databaseUrl: db.appUrl, jwtSecret: TEST_JWT_SECRET, ...options });
  await gateway.ready;
  return { db, gateway, app: express().use('/api', gateway) };
}

export async function stopGatewayApp(started: Partial<GatewayApp> | undefined): Promise<void> {
  await started?.gateway?.close();
  await started?.db?.drop();
}

/** The callers most files use: alice of tenant A and bob of tenant B, both with role `member`. */
export const tokenA = signToken({ tenant_id: TENANT_A, user_id: 'alice', role: 'member' });
export const tokenB = signToken({ tenant_id: TENANT_B, user_id: 'bob', role: 'member' });

/**
 * One gateway app for a whole test file: started in beforeAll (then handed to `onStart`, which
 * typically copies db, gateway and app into the file's variables) and stopped in afterAll.
 */
export function useGatewayApp(options: Partial<GatewayOptions>, onStart: (started: GatewayApp) => void): void {
  let started: GatewayApp | undefined;
  beforeAll(async () => {
    started = await startGatewayApp(options);
    onStart(started);
  });
  afterAll(() => stopGatewayApp(started));
}

/**
 * Gateways a test file builds as it goes, from `base()` (read when a gateway is built, so it may
 * name a database that beforeAll creates) plus each call's options; each is mounted at /api of its
 * own app. `track` takes a gateway a test creates itself; `closeAll` (in afterAll) closes them all.
 */
export function gatewayFactory(base: () => Partial<GatewayOptions>) {
  const gateways: Gateway[] = [];
  const track = (gateway: Gateway): Gateway => {
    gateways.push(gateway);
    return gateway;
  };
  return {
    track,
    async appWith(options: Partial<GatewayOptions> = {}): Promise<express.Express> {
      const gateway = track(createGateway({ ...base(), ...options } as GatewayOptions));
      await gateway.ready;
      return express().use('/api', gateway);
    },
    async closeAll(): Promise<void> {
      await Promise.all(gateways.map((g) => g.close()));
    },
  };
}
