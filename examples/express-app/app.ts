/**
 * Embedding tablegate in an existing Express app: the host keeps its own routes and middleware,
 * mounts the data API under /api and the operational endpoints under /ops.
 *
 * The request log shows how host middleware sees the gateway's work: the gateway puts its
 * request context on `res.locals.gateway` (identity, command, ...) before it answers, so
 * middleware mounted in front of it can read it when the response goes out. Headers can only be
 * added before they are written, hence the `writeHead` hook (the same technique as the
 * `on-headers` package); the log line is written once the response has finished.
 *
 * Run: DATABASE_URL=postgres://app@localhost/app JWT_SECRET=... npx ts-node examples/express-app/app.ts
 * (see README.md). `__tests__/integration/examples-express-app.test.ts` starts this app, so it
 * cannot silently stop working.
 */
import type { ServerResponse } from 'node:http';
import express from 'express';
import type { NextFunction, Request, Response } from 'express';
import { createGateway, operationOf } from 'tablegate';
import type { Gateway, GatewayContext } from 'tablegate';

export interface AppOptions {
  databaseUrl: string;
  jwtSecret: string;
  /** Where request log lines go; console.log by default. */
  log?: (line: string) => void;
}

export function createApp(options: AppOptions): { app: express.Express; gateway: Gateway } {
  const gateway = createGateway({ databaseUrl: options.databaseUrl, jwtSecret: options.jwtSecret });
  const app = express();
  app.disable('x-powered-by');

  // A route of the host application itself, untouched by the gateway.
  app.get('/hello', (_req, res) => {
    res.json({ message: 'hello from the host app' });
  });

  app.use('/api', requestLog(options.log ?? console.log), gateway);
  // /ops/metrics and /ops/health/internal. Set admin_token, or keep /ops off the public network.
  app.use('/ops', gateway.admin);
  return { app, gateway };
}

/**
 * Logs method, path, status, the gateway command and tenant; adds `x-tablegate-command`. The command
 * is named by `operationOf` (`list`, `get`, `read`, `insert`, ...): the names metrics and traces use,
 * finer than `command.kind` (every read is a `read` command).
 */
function requestLog(log: (line: string) => void) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const started = process.hrtime.bigint();
    const context = (): GatewayContext | undefined => res.locals['gateway'] as GatewayContext | undefined;

    const writeHead = res.writeHead as (this: ServerResponse, ...args: unknown[]) => ServerResponse;
    (res as ServerResponse).writeHead = function (this: ServerResponse, ...args: unknown[]) {
      const command = context()?.command;
      if (command && !this.headersSent) this.setHeader('x-tablegate-command', operationOf(command));
      return writeHead.apply(this, args);
    } as ServerResponse['writeHead'];

    res.on('finish', () => {
      const ctx = context();
      const ms = (Number(process.hrtime.bigint() - started) / 1e6).toFixed(1);
      log(`${req.method} ${req.originalUrl} ${res.statusCode} command=${ctx?.command ? operationOf(ctx.command) : '-'} tenant=${ctx?.identity?.tenantId || '-'} ${ms}ms`);
    });
    next();
  };
}

if (require.main === module) {
  const { DATABASE_URL, JWT_SECRET, PORT = '3000' } = process.env;
  if (!DATABASE_URL || !JWT_SECRET) {
    console.error('Set DATABASE_URL and JWT_SECRET (see examples/express-app/README.md).');
    process.exit(1);
  }
  const { app, gateway } = createApp({ databaseUrl: DATABASE_URL, jwtSecret: JWT_SECRET });
  gateway.ready.then(
    () => {
      const server = app.listen(Number(PORT), '127.0.0.1', () => console.log(`example app on http://127.0.0.1:${PORT} (API under /api)`));
      // Drain (docs/scaling-out.md): no new connections, requests in flight finish, new ones get 503.
      const stop = (): void => {
        server.close();
        void gateway.close().then(() => server.closeIdleConnections());
      };
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    },
    (err: Error) => {
      console.error(`tablegate is not ready: ${err.message}`);
      process.exitCode = 1;
      void gateway.close();
    },
  );
}
