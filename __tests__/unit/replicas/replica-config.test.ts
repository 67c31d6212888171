/**
 * The read-replica keys: defaults, URL checks that never quote a URL (it carries a password),
 * secrecy of the list on the resolved config, and the gw.toml spelling.
 */
import * as util from 'node:util';
import type { GatewayOptions } from '../../../lib/config/gateway-options';
import { resolveConfig } from '../../../lib/config/resolve-config';
import { GatewayConfigError } from '../../../lib/errors/gateway-config-error';
import { useTempFiles } from '../support/temp-files';
import { thrown } from '../support/thrown';

const url = 'postgres://gateway:hunter2@primary:5432/app';
const replica = 'postgres://gateway:r3plica-pw@replica-1:5432/app';
const errorOf = (fn: () => unknown): GatewayConfigError => thrown(fn, GatewayConfigError);
const { write } = useTempFiles('tablegate-replicas-');

describe('read replica configuration', () => {
  it('is off by default, with documented defaults for the rest', () => {
    expect(resolveConfig({ databaseUrl: url }, {})).toMatchObject({
      readReplicaUrls: undefined,
      readReplicaRetryMs: 5000,
      readReplicaCheckIntervalMs: 1000,
      readReplicaMaxLagMs: undefined,
      readYourWritesMs: 0,
    });
  });

  it('keeps the replica URLs secret: not enumerable, not in util.inspect or JSON', () => {
    const config = resolveConfig({ databaseUrl: url, readReplicaUrls: [replica] }, {});
    expect(config.readReplicaUrls).toEqual([replica]);
    expect(Object.keys(config)).not.toContain('readReplicaUrls');
    expect(util.inspect(config, { showHidden: true, depth: 5 })).not.toContain('r3plica-pw');
    expect(JSON.stringify(config)).not.toContain('r3plica-pw');
  });

  it('rejects an entry that is not a postgres URL by position, without quoting any URL', () => {
    const error = errorOf(() => resolveConfig({ databaseUrl: url, readReplicaUrls: [replica, 'mysql://u:s3cret@host/db'] }, {}));
    expect(error.message).toBe('option `readReplicaUrls`: entry 2 must be a postgres:// or postgresql:// URL, e.g. postgres://user@replica:5432/db');
    expect(error.key).toBe('readReplicaUrls');
  });

  it('rejects an empty list, a duplicate and a non-string without echoing the values', () => {
    for (const bad of [[], [replica, replica], [42]]) {
      const error = errorOf(() => resolveConfig({ databaseUrl: url, readReplicaUrls: bad } as unknown as GatewayOptions, {}));
      expect(error.message).toContain('option `readReplicaUrls` must be a non-empty list of postgres:// URLs (no duplicates) (got a list)');
      expect(error.message).not.toContain('r3plica-pw');
    }
  });

  it('bounds the intervals: retry and check at least 100 ms', () => {
    expect(errorOf(() => resolveConfig({ databaseUrl: url, readReplicaRetryMs: 10 }, {})).message).toContain('readReplicaRetryMs` must be an integer >= 100');
    expect(errorOf(() => resolveConfig({ databaseUrl: url, readReplicaCheckIntervalMs: 0 }, {})).message).toContain('readReplicaCheckIntervalMs` must be an integer >= 100');
    expect(errorOf(() => resolveConfig({ databaseUrl: url, readYourWritesMs: -1 }, {})).message).toContain('readYourWritesMs` must be an integer >= 0');
  });

  it('reads the snake_case keys from gw.toml, with a host-given pool too', () => {
    const file = write(
      'gw.toml',
      '[gateway]\nread_replica_urls = ["postgres://a@r1/app", "postgres://a@r2/app"]\nread_replica_retry_ms = 2000\n' +
        'read_replica_check_interval_ms = 500\nread_replica_max_lag_ms = 3000\nread_your_writes_ms = 1500\n',
    );
    const pool = { connect: () => undefined, query: () => undefined } as unknown as GatewayOptions['pool'];
    expect(resolveConfig({ configFile: file, pool }, {})).toMatchObject({
      readReplicaUrls: ['postgres://a@r1/app', 'postgres://a@r2/app'],
      readReplicaRetryMs: 2000,
      readReplicaCheckIntervalMs: 500,
      readReplicaMaxLagMs: 3000,
      readYourWritesMs: 1500,
    });
  });
});
