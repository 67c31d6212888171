/**
 * How the LISTEN connection is made (lib/schema/reload-listener.ts): like the pool's own
 * connections, outside the pool, or to reload_database_url. No connection is opened here.
 */
import pg from 'pg';
import { createConnectionPolicy } from '../../../lib/db/connection/create-connection-policy';
import { GatewayConfigError } from '../../../lib/errors/gateway-config-error';
import { listenClientFactory } from '../../../lib/schema/reload-listener';

type Params = { user?: string; password?: string; host?: string; port?: number; database?: string; ssl?: unknown; keepAlive?: boolean; application_name?: string };
const params = (client: pg.Client): Params => {
  const c = client as unknown as Params & { connectionParameters: Params };
  return { ...c.connectionParameters, password: c.password, ssl: c.ssl, keepAlive: (c as unknown as { connection: { _keepAlive: boolean } }).connection._keepAlive };
};

test('uses the pool options (password and TLS included), its Client class, keep-alive and its own application_name', () => {
  const ssl = { rejectUnauthorized: true };
  const pool = new pg.Pool({ connectionString: 'postgres://app:pw1@db.internal:6432/shop', ssl, max: 3, application_name: 'tablegate' });
  const client = listenClientFactory(pool, undefined)();
  expect(client).toBeInstanceOf(pg.Client);
  expect(params(client)).toMatchObject({ user: 'app', password: 'pw1', host: 'db.internal', port: 6432, database: 'shop', ssl, keepAlive: true, application_name: 'tablegate-reload' });
});

test('reload_database_url is a connection of its own, with the connection policy of that URL', () => {
  const pool = new pg.Pool({ host: 'pgbouncer', port: 6432, user: 'app', password: 'pw1', database: 'shop', ssl: { rejectUnauthorized: true } });
  const { Client } = createConnectionPolicy('postgres://direct:pw2@db-primary:5432/shop?sslmode=disable', undefined, {});
  const client = listenClientFactory(pool, Client)();
  expect(params(client)).toMatchObject({ user: 'direct', password: 'pw2', host: 'db-primary', port: 5432, database: 'shop', ssl: false, keepAlive: true, application_name: 'tablegate-reload' });
});

test('a pool without connection options needs reload_database_url', () => {
  const bare = { connect: () => undefined, query: () => undefined } as unknown as pg.Pool;
  const error = (() => {
    try {
      listenClientFactory(bare, undefined);
    } catch (e) {
      return e as GatewayConfigError;
    }
    return undefined;
  })();
  expect(error).toBeInstanceOf(GatewayConfigError);
  expect(error?.message).toMatch(/set reload_database_url, or reload_listen = false/);
  expect(() => listenClientFactory(bare, createConnectionPolicy('postgres://direct@db/app', undefined, {}).Client)()).not.toThrow();
});
