/**
 * `tablegate openapi --config gw.toml [--out file]` and `tablegate gen types --config gw.toml
 * [--out file.ts]` (docs/openapi.md): the OpenAPI 3.1 document and the TypeScript `Database` types
 * of the schema a config file exposes.
 *
 * In: the config file (its database_url, schemas, rpc keys). Out: the text on stdout or in
 * `--out`, exit 0; or one error line on stderr, exit 1. The description is the administrator's
 * view: every table, column and callable function of the exposed schemas, no access policy
 * applied (a caller's own, filtered document is at GET /{mount}/). Never: starts a server.
 */
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { resolveConfig } from '../config/resolve-config';
import { createGateway, type Gateway } from '../create-gateway';
import { messageOf } from './serve';

export interface DescribeOptions {
  readonly configFile: string;
  readonly out?: string | undefined;
  /** The OpenAPI document's server URL (default `/api`, where `tablegate serve` mounts the routes). */
  readonly serverUrl?: string | undefined;
}

export function printOpenApi(opts: DescribeOptions): Promise<number> {
  return describeWith(opts, async (gateway) => `${JSON.stringify(await gateway.openApi(opts.serverUrl ?? '/api'), null, 2)}\n`);
}

export function printTypes(opts: DescribeOptions): Promise<number> {
  return describeWith(opts, (gateway) => gateway.typeScript());
}

async function describeWith(opts: DescribeOptions, make: (gateway: Gateway) => Promise<string>): Promise<number> {
  let gateway: Gateway;
  try {
    // No listener is started: schema reload would only keep the process alive. Nothing is served
    // either, so a config without a token key (JWT_SECRET comes from the serving environment) is
    // given a throwaway one instead of failing for a key it will never use.
    const base = { configFile: opts.configFile, reloadListen: false, schemaPollS: 0 };
    const probe = resolveConfig({ ...base, requireAuth: false });
    const noKey = probe.jwtSecret === undefined && probe.jwtPublicKeyPath === undefined && probe.jwksUrl === undefined;
    gateway = createGateway({ ...base, ...(noKey ? { jwtSecret: randomBytes(32).toString('hex') } : {}) });
  } catch (err) {
    return fail(messageOf(err));
  }
  try {
    await gateway.ready;
    const text = await make(gateway);
    if (opts.out === undefined) process.stdout.write(text);
    else writeFileSync(opts.out, text);
    return 0;
  } catch (err) {
    return fail(messageOf(err));
  } finally {
    await gateway.close().catch(() => undefined);
  }
}

function fail(message: string): number {
  process.stderr.write(`tablegate: ${message}\n`);
  return 1;
}
