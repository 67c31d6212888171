/**
 * geometryItem (lib/command/geometry-item.ts): which top-level item is a geo+json Feature's
 * geometry, and the schema PostGIS's ST_AsGeoJSON is named in (docs/postgrest-dialect.md, "GeoJSON").
 */
import type { FieldItem, SelectItem } from '../../../lib/command/command';
import { geometryItem } from '../../../lib/command/geometry-item';
import type { Column } from '../../../lib/schema/schema-types';

function column(name: string, compareType: string | null): Column {
  return { name, position: 1, type: 'x', typeOid: 1, category: 'U', elementType: null, nullable: true, hasDefault: false, identity: '', generated: false, compareType, compareElementType: null, compareListType: null };
}

function field(name: string, compareType: string | null, extra: Partial<FieldItem> = {}): SelectItem {
  return { kind: 'field', key: name, field: { column: column(name, compareType), path: [] }, cast: null, aggregate: null, resultCast: null, ...extra } as FieldItem;
}

describe('geometryItem', () => {
  it('the first plain geometry or geography column, with its type schema', () => {
    expect(geometryItem([field('id', 'integer'), field('geom', 'public.geometry'), field('g2', 'public.geometry')])).toEqual({ index: 1, postgisSchema: 'public' });
    expect(geometryItem([field('zone', 'extensions.geography')])).toEqual({ index: 0, postgisSchema: 'extensions' });
    expect(geometryItem([field('geom', '"Geo ""x"".y".geometry')])).toEqual({ index: 0, postgisSchema: 'Geo "x".y' });
  });

  it('none: other types, arrays, casts, JSON paths, aggregates, a type the role may not name', () => {
    expect(geometryItem([])).toBeNull();
    expect(geometryItem([field('a', 'text'), field('b', 'public.geometry[]'), field('c', 'public.geometryx'), field('d', 'geometry')])).toBeNull();
    expect(geometryItem([field('a', 'public.geometry', { cast: 'text' })])).toBeNull();
    expect(geometryItem([field('a', 'public.geometry', { aggregate: 'count' })])).toBeNull();
    expect(geometryItem([{ kind: 'field', key: 'a', field: { column: column('a', 'public.geometry'), path: [{ key: 'x', asText: false, index: false }] }, cast: null, aggregate: null, resultCast: null } as unknown as SelectItem])).toBeNull();
    expect(geometryItem([field('a', null)])).toBeNull();
  });
});
