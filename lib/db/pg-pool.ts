/**
 * PgPool: a node-postgres `pg.Pool` as the public types name it (`GatewayOptions.pool`).
 * Declared structurally, with the few members the gateway relies on, so that a consumer's
 * TypeScript compiles without @types/pg (docs/getting-started.md), and a consumer whose own
 * @types/pg is another version can still pass its Pool (two copies of a class are not assignable
 * to each other). The gateway works on pg.Pool inside; resolveConfig checks the shape at run time.
 * Never: import from 'pg' here (that would put @types/pg back into the public declarations).
 */
export interface PgPool {
  connect(): Promise<unknown>;
  query(text: string, values?: unknown[]): Promise<unknown>;
  end(): Promise<void>;
  on(event: 'error', listener: (err: Error) => void): unknown;
  readonly totalCount: number;
  readonly idleCount: number;
  readonly waitingCount: number;
}
