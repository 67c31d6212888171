/**
 * The geometry of each Feature of a geo+json read (docs/postgrest-dialect.md, "GeoJSON"): the
 * first selected top-level field whose column is PostGIS's `geometry` or `geography`, as
 * ST_AsGeoJSON(record) picks it, and the schema holding that type, where PostGIS's ST_AsGeoJSON
 * is (an extension's objects are all in one schema).
 * In: the top level's items (after the policy, which may drop a `*` column). Out: the item's
 * index and the schema name, or null. Never: trusts caller text: the schema name comes from the
 * schema cache (`Column.compareType`, `quote_ident(schema).quote_ident(type)`).
 */
import type { Column } from '../schema/schema-types';
import type { SelectItem } from './command';

export interface GeometryItem {
  /** Index in the level's items. */
  readonly index: number;
  /** The schema of the column's type: ST_AsGeoJSON is named in it. */
  readonly postgisSchema: string;
}

/** The geometry item of a level's items: a plain column (no JSON path, cast or aggregate) of type geometry / geography. */
export function geometryItem(items: readonly SelectItem[]): GeometryItem | null {
  for (let index = 0; index < items.length; index++) {
    const item = items[index]!;
    if (item.kind !== 'field' || item.field.path.length > 0 || item.cast !== null || item.aggregate !== null) continue;
    const postgisSchema = postgisSchemaOf(item.field.column);
    if (postgisSchema !== null) return { index, postgisSchema };
  }
  return null;
}

/** `public.geometry` -> `public`; null when the column is not a geometry / geography, or its type's schema is not usable by the gateway's role. */
function postgisSchemaOf(column: Column): string | null {
  const m = /^("(?:[^"]|"")+"|[a-z_][a-z0-9_$]*)\.(geometry|geography)$/.exec(column.compareType ?? '');
  if (!m) return null;
  const schema = m[1]!;
  return schema.startsWith('"') ? schema.slice(1, -1).replace(/""/g, '"') : schema;
}
