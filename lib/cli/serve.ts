/**
 * `tablegate serve --config gw.toml [--port N]`: the gateway as a standalone server. The data
 * routes are mounted at /api (with `dialect = "postgrest"` also at /rest/v1, where supabase-js looks,
 * and, with the change feed on, its realtime endpoint at /realtime/v1), `gateway.mcp` at /mcp when `mcp = { enabled = true }` (docs/mcp.md),
 * and `gateway.admin` (/metrics, /health/internal, /health/live) at /;
 * with `[gateway] cors_origins`, cors() runs in front of /api (docs/security.md, "Browsers and
 * CORS"). SIGHUP reads the schema again (`gateway.reloadSchema()`) and prints the outcome; SIGINT
 * and SIGTERM drain.
 *
 * Order matters: the config is resolved and the dev-mode rule checked before anything connects;
 * the port is opened only after `gateway.ready` (schema discovered, role checked), so a server
 * that listens is a server that answers. Failures print one line and resolve to exit code 1;
 * only messages are printed (GatewayConfigError never quotes a secret), never the config.
 *
 * Dev mode is fail-closed (docs/security.md, "Dev mode"): dev headers are an
 * impersonation mechanism, so with dev mode on the server binds to loopback or not at all.
 * resolveConfig enforces this too; checking the effective bind here keeps the CLI safe even if
 * the bind ever comes from somewhere else.
 */
import http from 'node:http';
import net from 'node:net';
import cors from 'cors';
import express from 'express';
import { resolveConfig } from '../config/resolve-config';
import { createGateway } from '../create-gateway';
import { corsOptions } from '../http/cors-options';
import { createDocsRouter } from '../http/docs/create-docs-router';
import { isLoopbackHost, parseBind } from '../http/loopback';
import type { Gateway } from '../create-gateway';
import { loadSwaggerUi } from './load-swagger-ui';

export interface ServeOptions {
  readonly configFile: string;
  /** Overrides the port of `[gateway] bind`. */
  readonly port?: number | undefined;
}

export async function serve(opts: ServeOptions): Promise<number> {
  let gateway: Gateway;
  let host: string;
  let port: number;
  try {
    const config = resolveConfig({ configFile: opts.configFile });
    // resolveConfig has validated the shape of bind.
    ({ host, port } = parseBind(config.bind)!);
    if (opts.port !== undefined) port = opts.port;
    if (config.devMode && !isLoopbackHost(host)) {
      return fail(
        `dev mode is on (GW_DEV_MODE=true or dev_mode = true in ${opts.configFile}), so tablegate serve binds only to a ` +
          `loopback address (127.0.0.1, ::1 or localhost), not ${host}; change [gateway] bind or turn dev mode off`,
      );
    }
    gateway = createGateway({ configFile: opts.configFile });
  } catch (err) {
    return fail(messageOf(err));
  }
  const reloadOnHangUp = onHangUp(gateway);

  try {
    await gateway.ready;
  } catch (err) {
    await gateway.close().catch(() => undefined);
    return fail(messageOf(err));
  }

  const app = express();
  app.disable('x-powered-by');
  // [gateway] cors_origins: cors() answers the preflights and marks the answers, before auth.
  // With the PostgREST dialect, also where supabase-js looks (`createClient(serverUrl, key)`).
  const mounts = gateway.config.dialect === 'postgrest' ? ['/api', '/rest/v1'] : ['/api'];
  if (gateway.config.corsOrigins !== undefined) app.use(mounts, cors(corsOptions(gateway.config)));
  app.use(mounts, gateway);
  // The agents' door (docs/mcp.md), only when [gateway] mcp = { enabled = true }.
  if (gateway.config.mcp?.enabled === true) app.use('/mcp', gateway.mcp);
  // The API explorer (docs/getting-started.md, "The API explorer"): each caller sees their own
  // document. swagger-ui-dist is an optional peer: from the project or the demo's cache; serve
  // never runs npm (a server's start should not depend on the registry), it says how to enable it.
  const docsDir = await loadSwaggerUi().catch(() => undefined);
  if (docsDir !== undefined) app.use('/docs', createDocsRouter({ apiUrl: gateway.config.docsApiUrl, assetDir: docsDir }));
  else process.stderr.write('tablegate: the API explorer at /docs is off: swagger-ui-dist is not installed; run npm install swagger-ui-dist (or tablegate demo once, which caches it) to enable it\n');
  app.use(gateway.admin);

  let server: http.Server;
  try {
    server = await listen(app, host, port);
  } catch (err) {
    await gateway.close().catch(() => undefined);
    return fail(messageOf(err));
  }
  process.stdout.write(`tablegate listening on ${baseUrl(server)}/api\n`);
  // supabase-js Realtime (docs/postgrest-dialect.md, "Realtime"): the WebSocket endpoint at /realtime/v1.
  if (gateway.config.dialect === 'postgrest' && gateway.config.changeFeed?.enabled === true) {
    gateway.attachRealtime(server, { path: '/realtime/v1' });
    process.stdout.write(`tablegate: supabase-js clients connect to ${baseUrl(server)} (REST at /rest/v1, realtime at /realtime/v1)\n`);
  }

  await untilSignal();
  process.off('SIGHUP', reloadOnHangUp);
  // Stop accepting connections, and drain: requests already taken finish (up to
  // drain_timeout_ms), requests that still arrive on kept-alive connections get 503.
  await closeServer(server, () => gateway.close());
  return 0;
}

/**
 * SIGHUP -> reloadSchema(), as other servers reload on a hang-up (docs/scaling-out.md, "Schema
 * reload on DDL"); installed at once, since Node's default for SIGHUP is to exit. One line says
 * how it went; a failed reload keeps the schema the gateway had.
 */
function onHangUp(gateway: Gateway): () => void {
  const listener = (): void => {
    const started = Date.now();
    gateway.reloadSchema().then(
      () => process.stdout.write(`tablegate: schema reloaded on SIGHUP in ${Date.now() - started} ms\n`),
      (err: unknown) => process.stderr.write(`tablegate: schema reload on SIGHUP failed, the previous schema stays: ${messageOf(err)}\n`),
    );
  };
  process.on('SIGHUP', listener);
  return listener;
}

/** Opens the port; an occupied or forbidden port becomes an Error with a message worth printing. */
export function listen(app: express.Express, host: string, port: number, busyHint = 'change [gateway] bind or pass --port'): Promise<http.Server> {
  return new Promise((resolve, reject) => {
    const server = http.createServer(app);
    server.once('error', (err: NodeJS.ErrnoException) => {
      const where = `${host.includes(':') ? `[${host}]` : host}:${port}`;
      if (err.code === 'EADDRINUSE') reject(new Error(`port ${port} is already in use on ${host}; ${busyHint}`));
      else if (err.code === 'EACCES') reject(new Error(`not allowed to listen on ${where}; use a port above 1023`));
      else if (err.code === 'EADDRNOTAVAIL') reject(new Error(`cannot listen on ${where}: no such local address`));
      else reject(err);
    });
    server.listen(port, host, () => resolve(server));
  });
}

/** http://host:port of a listening server (the actual port, also when 0 was asked for). */
export function baseUrl(server: http.Server): string {
  const address = server.address() as net.AddressInfo;
  const host = address.family === 'IPv6' || address.address.includes(':') ? `[${address.address}]` : address.address;
  return `http://${host}:${address.port}`;
}

/** Resolves on the first SIGINT or SIGTERM; a second one gets Node's default (immediate exit). */
export function untilSignal(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const onSignal = (signal: NodeJS.Signals): void => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
      resolve(signal);
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  });
}

/**
 * Stops accepting connections, runs `drain` (the gateway's close(), which answers every request
 * it has taken), then drops keep-alive connections as they fall idle, so the process can exit.
 */
export async function closeServer(server: http.Server, drain: () => Promise<void> = async () => undefined): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  await drain();
  const sweep = setInterval(() => server.closeIdleConnections(), 100);
  // A response still being written 5 s after the drain is cut off rather than holding the exit.
  const cut = setTimeout(() => server.closeAllConnections(), 5000);
  server.closeIdleConnections();
  await closed;
  clearInterval(sweep);
  clearTimeout(cut);
}

export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function fail(message: string): number {
  process.stderr.write(`tablegate: ${message}\n`);
  return 1;
}
