// Types of support/pgbouncer.js (plain CommonJS, also required by global-setup-pgbouncer.js and bench/pgbouncer.js).

export type FoundPgBouncer = { path: string; version: string; versionNum: number; missing?: undefined } | { missing: string };

export interface PgBouncerOptions {
  users?: { user: string; password: string }[];
  poolMode?: 'session' | 'transaction' | 'statement';
  defaultPoolSize?: number;
  maxPreparedStatements?: number;
  settings?: Record<string, string | number>;
}

export interface RunningPgBouncer {
  readonly host: string;
  readonly port: number;
  readonly pid: number;
  readonly version: string;
  readonly versionNum: number;
  readonly dir: string;
  rewrite(url: string): string;
  log(): string;
  stop(): Promise<void>;
}

export function findPgBouncer(): FoundPgBouncer;
export function startPgBouncer(adminUrl: string, options?: PgBouncerOptions): Promise<RunningPgBouncer>;
export const PREPARED_STATEMENTS_SINCE: number;
