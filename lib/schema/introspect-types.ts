/**
 * Reads the PostgreSQL types the exposed columns and functions use, for the descriptions of the
 * API (the OpenAPI document and the generated TypeScript types, docs/openapi.md).
 *
 * In: a queryable and the schema names. Out: one `RawType` row per type reachable from a column of
 * an exposed relation or an argument or result of an exposed function, following array elements,
 * domain bases and composite attributes (which may live in any schema). Never: filters by
 * privilege (a column's type is described whether or not its schema grants USAGE), nor reads data.
 *
 * Catalogs: PostgreSQL manual, "pg_type", "pg_enum", "pg_attribute"
 * (https://www.postgresql.org/docs/current/catalog-pg-type.html).
 */

import type { PgType } from './schema-types';

/** A pool or client (the same shape as introspect.ts's `Queryable`, which imports this file). */
interface Queryable {
  query(text: string, values?: unknown[]): Promise<{ rows: any[] }>;
}
/** A `PgType` as the catalog query returns it: composite attributes as [name, type oid] pairs. */
export type RawType = Omit<PgType, 'attributes'> & { readonly attributes: readonly (readonly [string, number])[] };

// An array is a varlena type with an element (point, name and int2vector have typelem too, but
// are fixed-size or plain-storage and render as text): the same test format_type() makes.
const TYPES_SQL = `
WITH RECURSIVE seed(oid) AS (
  SELECT a.atttypid
  FROM pg_attribute a
  JOIN pg_class c ON c.oid = a.attrelid
  JOIN pg_namespace n ON n.oid = c.relnamespace
  WHERE n.nspname = ANY($1::text[]) AND n.nspname NOT IN ('pg_catalog', 'information_schema')
    AND c.relkind IN ('r', 'p', 'v', 'm', 'f') AND a.attnum > 0 AND NOT a.attisdropped
  UNION
  SELECT u.typ
  FROM pg_proc p
  JOIN pg_namespace n ON n.oid = p.pronamespace
  CROSS JOIN LATERAL unnest(COALESCE(p.proallargtypes, p.proargtypes::oid[]) || p.prorettype) AS u(typ)
  WHERE n.nspname = ANY($1::text[]) AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND p.prokind = 'f'
), reach(oid) AS (
  SELECT oid FROM seed
  UNION
  SELECT x.oid
  FROM reach r
  JOIN pg_type t ON t.oid = r.oid
  CROSS JOIN LATERAL (
    SELECT t.typelem WHERE t.typelem <> 0 AND t.typlen = -1 AND t.typstorage <> 'p'
    UNION ALL SELECT t.typbasetype WHERE t.typtype = 'd'
    UNION ALL SELECT a.atttypid FROM pg_attribute a
              WHERE t.typtype = 'c' AND a.attrelid = t.typrelid AND a.attnum > 0 AND NOT a.attisdropped
  ) AS x(oid)
)
SELECT t.oid::int8 AS oid, n.nspname AS schema, t.typname AS name, t.typtype::text AS typtype,
       t.typcategory::text AS category,
       CASE WHEN t.typelem <> 0 AND t.typlen = -1 AND t.typstorage <> 'p' THEN t.typelem::int8 END AS element_oid,
       CASE WHEN t.typtype = 'd' THEN t.typbasetype::int8 END AS base_oid,
       ARRAY(SELECT e.enumlabel::text FROM pg_enum e WHERE e.enumtypid = t.oid ORDER BY e.enumsortorder) AS labels,
       (SELECT json_agg(json_build_array(a.attname, a.atttypid::int8) ORDER BY a.attnum)
        FROM pg_attribute a
        WHERE t.typtype = 'c' AND a.attrelid = t.typrelid AND a.attnum > 0 AND NOT a.attisdropped) AS attributes
FROM pg_type t
JOIN pg_namespace n ON n.oid = t.typnamespace
WHERE t.oid IN (SELECT oid FROM reach)
ORDER BY t.oid`;

const str = (v: unknown): string => (v === null || v === undefined ? '' : String(v));
const oidOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

export async function introspectTypes(db: Queryable, schemas: readonly string[]): Promise<RawType[]> {
  const { rows } = await db.query(TYPES_SQL, [[...schemas]]);
  return rows.map(
    (r): RawType => ({
      oid: Number(r.oid),
      schema: str(r.schema),
      name: str(r.name),
      typtype: str(r.typtype),
      category: str(r.category),
      elementOid: oidOrNull(r.element_oid),
      baseOid: oidOrNull(r.base_oid),
      labels: Array.isArray(r.labels) ? r.labels.map(str) : [],
      attributes: Array.isArray(r.attributes) ? (r.attributes as unknown[][]).map((a) => [str(a[0]), Number(a[1])] as const) : [],
    }),
  );
}
