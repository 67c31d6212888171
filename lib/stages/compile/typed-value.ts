/**
 * A caller's text value, bound as a parameter and cast to the type of the column it is compared
 * with: `$1::kinds.pair`. In: a schema-cache column and the text. Out: a fragment. Never: leaves
 * the parameter untyped where PostgreSQL would infer a type that cannot be read from text (a
 * composite column compared with `$1` makes `$1` an anonymous `record`), or casts with the
 * column's type modifier (`numeric(12,2)` would round the value before comparing it).
 * The type names come from the catalog (`Column.compareType`, docs/querying.md#column-types);
 * when the gateway's role may not name the type, the parameter stays untyped (PostgreSQL infers it).
 */
import type { Column } from '../../schema/schema-types';
import { catalogType, sql, type Sql } from '../../sql/sql';

export function typedValue(column: Column, value: string): Sql {
  return column.compareType === null ? sql`${value}` : sql`${value}::${catalogType(column.compareType)}`;
}
