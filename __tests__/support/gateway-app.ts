/**
 * The usual integration-test set-up: a fresh test database, a gateway on it as the RLS-bound app
 * role (HS256 with TEST_JWT_SECRET), and an Express app with the gateway at /api.
 */
import express from 'express';
import { createGateway, type Gateway, type GatewayOptions } from '../../lib';
import { createTestDatabase, TEST_JWT_SECRET, type TestDatabase } from './test-database';

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
