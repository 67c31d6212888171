/**
 * Discovers the schema: the catalog queries of `introspect`, then `buildSchemaCache`.
 * Called once at `ready` and on `reloadSchema()`; never on the request path.
 */
import createDebug from 'debug';
import { buildSchemaCache } from './build-schema-cache';
import { INTROSPECTION_QUERY_COUNT, introspect, type Queryable } from './introspect';
import type { SchemaCache } from './schema-types';

const debug = createDebug('tablegate:schema');

export async function loadSchema(pool: Queryable, schemas: readonly string[]): Promise<SchemaCache> {
  const started = process.hrtime.bigint();
  const raw = await introspect(pool, schemas);
  const queried = process.hrtime.bigint();
  const cache = buildSchemaCache(raw, schemas);
  const built = process.hrtime.bigint();
  const ms = (from: bigint, to: bigint): string => (Number(to - from) / 1e6).toFixed(1);
  debug(
    'loaded %d tables, %d columns, %d functions from schemas %o: %d queries in %s ms, build %s ms',
    cache.tables.length,
    raw.columns.length,
    cache.functions.length,
    cache.schemas,
    INTROSPECTION_QUERY_COUNT,
    ms(started, queried),
    ms(queried, built),
  );
  return cache;
}
