/**
 * A private PostgreSQL for the change feed's tests (change-feed, realtime, the postgrest example's
 * live screen): wal_level = logical, the gateway's role `tablegate_app` (NOSUPERUSER NOBYPASSRLS)
 * and the feed's REPLICATION-only role `tablegate_feed`, password-authenticated, then the test's
 * own schema SQL. Gives the URLs each role connects with.
 */
import { startPrivatePostgres, type PrivatePostgres } from './private-postgres';

export interface FeedPostgres {
  readonly server: PrivatePostgres;
  /** The gateway's connection: `tablegate_app`. */
  readonly appUrl: string;
  /** The change feed's connection: `tablegate_feed`. */
  readonly feedUrl: string;
}

const ROLES_SQL = `
CREATE ROLE tablegate_app LOGIN NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE PASSWORD 'app';
CREATE ROLE tablegate_feed LOGIN REPLICATION NOSUPERUSER NOBYPASSRLS PASSWORD 'feed';
`;

export async function startFeedPostgres(binDir: string, schemaSql: string): Promise<FeedPostgres> {
  const server = await startPrivatePostgres({
    binDir,
    hba: ['host all tablegate_app 127.0.0.1/32 scram-sha-256', 'host all tablegate_feed 127.0.0.1/32 scram-sha-256'],
    settings: { wal_level: 'logical', max_replication_slots: '10', max_wal_senders: '10' },
    setupSql: ROLES_SQL + schemaSql,
  });
  const url = (user: string, password: string) => `postgres://${user}:${password}@127.0.0.1:${server.port}/postgres?sslmode=disable`;
  return { server, appUrl: url('tablegate_app', 'app'), feedUrl: url('tablegate_feed', 'feed') };
}
