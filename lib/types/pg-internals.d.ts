// pg-pool ships no types of its own; it is the class pg exports as `Pool`, so reuse that type.
declare module 'pg-pool' {
  import type { Pool, PoolConfig, Client } from 'pg';
  const PgPool: new (config?: PoolConfig & { Client?: typeof Client }) => Pool;
  export = PgPool;
}

// node-postgres' value serializer (Date, Buffer, arrays, objects -> wire text), used by
// the pipelined transaction exactly as pg's own Query uses it.
declare module 'pg/lib/utils' {
  export function prepareValue(value: unknown): unknown;
}
