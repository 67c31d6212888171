/**
 * The shape of a `Database` type (what `tablegate gen types` emits; docs/client.md, "The Database
 * type") and the helpers that read rows, insert and update shapes, relations and functions out of
 * it. Types only: nothing here exists at run time.
 */

/** A JSON value, as json / jsonb columns hold it. */
export type Json = string | number | boolean | null | { [key: string]: Json | undefined } | Json[];

export interface GenericRelationship {
  readonly table: string;
  readonly cardinality: 'one' | 'many';
}

/** What any Database type satisfies; `tables`, `enums` and `functions` are read with the helpers below. */
export interface GenericDatabase {
  tables: object;
  enums?: object;
  functions?: object;
}

/** The Database type a client without one gets: any table, any column, values `unknown`. */
export interface AnyDatabase {
  tables: {
    [table: string]: {
      Row: Record<string, unknown>;
      Insert: Record<string, unknown>;
      Update: Record<string, unknown>;
      Relationships: Record<string, GenericRelationship>;
    };
  };
  enums: Record<string, string>;
  functions: Record<string, { Args: Record<string, unknown>; Returns: unknown }>;
}

type TablesOf<D> = D extends { tables: infer T } ? T : never;
type FunctionsOf<D> = D extends { functions: infer F } ? F : never;
type TableDef<D, T> = T extends keyof TablesOf<D> ? TablesOf<D>[T] : never;

/** Names of the tables (and views) of D, as they appear in the URL path. */
export type TableName<D> = keyof TablesOf<D> & string;
export type RowOf<D, T> = TableDef<D, T> extends { Row: infer R } ? R : never;
export type InsertOf<D, T> = TableDef<D, T> extends { Insert: infer I } ? I : never;
export type UpdateOf<D, T> = TableDef<D, T> extends { Update: infer U } ? U : never;
export type RelationshipsOf<D, T> = TableDef<D, T> extends { Relationships: infer R } ? R : never;

/** The column names of a row type. */
export type ColumnOf<R> = keyof R & string;

type RelationNames<D, T, C extends 'one' | 'many'> = {
  [K in keyof RelationshipsOf<D, T>]: RelationshipsOf<D, T>[K] extends { cardinality: C } ? K : never;
}[keyof RelationshipsOf<D, T>] &
  string;

/**
 * What `expand` accepts (docs/relations.md): a to-one relation by its name, a to-many one as
 * `nested:<name>`. Without typed relations (AnyDatabase), any string.
 */
export type ExpandName<D, T> = string extends keyof RelationshipsOf<D, T> ? string : RelationNames<D, T, 'one'> | `nested:${RelationNames<D, T, 'many'>}`;

type RelatedRow<D, T, N> = N extends keyof RelationshipsOf<D, T>
  ? RelationshipsOf<D, T>[N] extends { table: infer X }
    ? RowOf<D, X>
    : unknown
  : unknown;

/** The keys `expand` adds to each row: an object or null for `rel`, an array for `nested:rel`. */
export type Expanded<D, T, E extends string> = {
  [K in E as K extends `nested:${infer N}` ? N : K]: K extends `nested:${infer N}` ? RelatedRow<D, T, N>[] : RelatedRow<D, T, K> | null;
};

/**
 * What `sort` accepts (docs/querying.md, "Sort by a related column"): a column of the table, or
 * `<to-one relation>.<column of its table>` (the gateway takes up to 4 relations; the types
 * spell one). Without typed relations (AnyDatabase), any string.
 */
export type SortName<D, T> = string extends keyof RelationshipsOf<D, T> ? string : ColumnOf<RowOf<D, T>> | RelatedColumn<D, T>;

type RelatedColumn<D, T> = { [K in RelationNames<D, T, 'one'>]: `${K}.${ColumnOf<RelatedRow<D, T, K>>}` }[RelationNames<D, T, 'one'>];

type NestedOf<D, T> = TableDef<D, T> extends { Nested: infer N } ? N : {};
type RelatedTable<D, T, K> = K extends keyof RelationshipsOf<D, T> ? (RelationshipsOf<D, T>[K] extends { table: infer X } ? X : never) : never;
/** The relations whose related row is inserted first, filling this row's foreign key. */
type Parents<D, T> = { [K in keyof NestedOf<D, T>]: NestedOf<D, T>[K] extends { side: 'parent' } ? K : never }[keyof NestedOf<D, T>];
type FillsOf<D, T, K extends keyof NestedOf<D, T>> = NestedOf<D, T>[K] extends { fills: infer F } ? F & string : never;
type Rels<D, T> = { [K in keyof NestedOf<D, T>]?: NestedValue<D, T, K> };
/** The row with its parent `K` given: the columns `K` fills are left out (the gateway refuses them beside it). */
type ViaParent<D, T, K extends keyof NestedOf<D, T>> = Omit<InsertOf<D, T>, FillsOf<D, T, K>> & { [F in FillsOf<D, T, K>]?: never } & { [P in K]-?: NestedValue<D, T, P> } & Omit<Rels<D, T>, K>;
type Without<I, F> = [I] extends [never] ? never : Omit<I, F & keyof I>;
type NestedValue<D, T, K extends keyof NestedOf<D, T>> = NestedOf<D, T>[K] extends { side: 'child'; fills: infer F }
  ? K extends keyof RelationshipsOf<D, T>
    ? RelationshipsOf<D, T>[K] extends { cardinality: 'many' }
      ? readonly Without<InsertOf<D, RelatedTable<D, T, K>>, F>[]
      : Without<InsertOf<D, RelatedTable<D, T, K>>, F>
    : never
  : InsertOf<D, RelatedTable<D, T, K>>;

/**
 * The body of `insert` with one object (docs/writing.md, "Nested inserts"): the row, and under a
 * relation name the related row (a parent inserted first, filling this row's foreign key, which
 * is then left out) or rows (children inserted after it, without the foreign key they get from
 * it). One level is typed; the gateway takes the same shape at any depth. Read from the `Nested`
 * key of the Database type; without it, the plain Insert.
 */
export type NestedInsertOf<D, T> = [InsertOf<D, T>] extends [never]
  ? never
  : {} extends NestedOf<D, T>
    ? InsertOf<D, T>
    : (InsertOf<D, T> & Omit<Rels<D, T>, Parents<D, T>>) | { [K in Parents<D, T>]: ViaParent<D, T, K> }[Parents<D, T>];

export type FunctionName<D> = keyof FunctionsOf<D> & string;
export type ArgsOf<D, F> = F extends keyof FunctionsOf<D> ? (FunctionsOf<D>[F] extends { Args: infer A } ? A : never) : never;
export type ReturnsOf<D, F> = F extends keyof FunctionsOf<D> ? (FunctionsOf<D>[F] extends { Returns: infer R } ? R : never) : never;

/**
 * The arguments of `rpc(name, ...)`: none for a function without arguments (Args `never`), optional
 * when every argument has a default (Args accepts `{}`), else the Args object.
 */
export type RpcArgs<A> = [A] extends [never] ? [] : {} extends A ? [args?: A] : [args: A];

/** A value a filter compares a column of type V with. */
export type FilterValue<V> = NonNullable<V>;

/** Columns of R whose values are arrays (for `contains`); any column of an untyped row. */
export type ArrayColumnOf<R> = string extends keyof R ? string : { [K in keyof R]: NonNullable<R[K]> extends readonly unknown[] ? K : never }[keyof R] & string;
/** The element type of an array column's values; `unknown` for an untyped column. */
export type ElementOf<V> = unknown extends V ? unknown : NonNullable<V> extends readonly (infer E)[] ? NonNullable<E> : never;

/** A primary-key value: one value, or the values of a composite key in key order. */
export type KeyValue = string | number | bigint | readonly (string | number | bigint)[];
