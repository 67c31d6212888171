/**
 * Reads the system catalogs of the configured schemas into plain rows (`RawSchema`).
 *
 * In: a queryable (pool or client) and the schema names. Out: six lists of rows, one per
 * catalog query (the types' query is in introspect-types.ts, the views' keys' in introspect-view-keys.ts), whatever the number of tables. It never filters by privilege: PostgreSQL
 * enforces GRANTs and RLS at query time, and a table the role cannot read still deserves a 403
 * rather than a 404. Cross-linking and freezing happen in `buildSchemaCache`.
 *
 * Catalogs: PostgreSQL manual, "System Catalogs" (https://www.postgresql.org/docs/current/catalogs.html),
 * the sections on pg_class, pg_attribute, pg_type, pg_constraint, pg_proc, pg_depend and
 * pg_namespace; format_type() and pg_get_function_identity_arguments() are in "System Information
 * Functions and Operators" (https://www.postgresql.org/docs/current/functions-info.html).
 */

import { introspectTypes, type RawType } from './introspect-types';
import { introspectViewKeys, type RawViewKeyDependency } from './introspect-view-keys';

export interface Queryable {
  query(text: string, values?: unknown[]): Promise<{ rows: any[] }>;
}

export interface RawRelation {
  readonly oid: number;
  readonly schema: string;
  readonly name: string;
  /** `pg_class.relkind`. */
  readonly kind: string;
  readonly rlsEnabled: boolean;
  readonly rlsForced: boolean;
  /** `pg_relation_is_updatable(oid, true)`: the bits 8 INSERT, 4 UPDATE, 16 DELETE; absent in hand-made rows. */
  readonly updatableEvents?: number;
  /** `pg_class.reltype`: the OID of the relation's row type; absent in hand-made rows. */
  readonly rowTypeOid?: number;
}

export interface RawColumn {
  readonly relationOid: number;
  readonly position: number;
  readonly name: string;
  readonly type: string;
  readonly typeOid: number;
  readonly category: string;
  readonly elementType: string | null;
  readonly notNull: boolean;
  readonly hasDefault: boolean;
  /** `pg_attribute.attidentity`: '', 'a' or 'd'. */
  readonly identity: string;
  /** `pg_attribute.attgenerated`: '' when not generated, 's' stored, 'v' virtual (PostgreSQL 18). */
  readonly generated: string;
  /** The type a text value is cast to for comparisons with the column (see `Column.compareType`). */
  readonly compareType: string;
  /** The element type of `compareType` when that is an array, else null. */
  readonly compareElementType: string | null;
  /** `compareType` is not an array and has an array type (`pg_type.typarray`). */
  readonly compareHasArray: boolean;
  /** The discovering role (the gateway's) may name `compareType`: USAGE on the schema it is in. */
  readonly compareUsable: boolean;
  /** `compareType`'s own comparison operators (=, <>, <, <=, >, >=) by name, with the schema of each. */
  readonly compareOperators?: Readonly<Record<string, string>>;
  /** Some `=` applies to `compareType` (its own, an implicit cast's, or a polymorphic one). */
  readonly compareHasEquality?: boolean;
  /** `compareType` has a default btree operator class (what ORDER BY uses). */
  readonly compareSortable?: boolean;
}

export interface RawConstraint {
  readonly relationOid: number;
  readonly name: string;
  readonly type: 'p' | 'u' | 'f';
  /** Column names in key order. */
  readonly columns: readonly string[];
  /** Foreign keys only (else null): the referenced relation, which may lie outside the schemas. */
  readonly referencedRelationOid: number | null;
  /** Foreign keys only: referenced column names, matching `columns` one to one. */
  readonly referencedColumns: readonly string[];
}

export interface RawFunction {
  readonly oid: number;
  readonly schema: string;
  readonly name: string;
  readonly identityArgs: string;
  /** `proargnames`: every argument (OUT included when `argModes` is set), '' when unnamed; null when none is named. */
  readonly argNames: readonly string[] | null;
  /** `proargmodes`; null means every argument is IN. */
  readonly argModes: readonly string[] | null;
  /** `format_type()` of `proallargtypes`, or of `proargtypes` when that is null. */
  readonly argTypes: readonly string[];
  /** `pronargdefaults`: how many trailing input arguments have defaults. */
  readonly defaults: number;
  readonly variadic: boolean;
  /** OIDs of `argTypes`, one to one. */
  readonly argTypeOids: readonly number[];
  /** `pg_type.typcategory` then `typtype` of each of `argTypes` (e.g. 'Nb', 'Ap', 'Uc'). */
  readonly argTypeKinds: readonly string[];
  readonly returnType: string;
  readonly returnTypeOid: number;
  /** `pg_type.typtype` of the return type: 'b' base, 'c' composite, 'p' pseudo (void, record, trigger...), ... */
  readonly returnTyptype: string;
  /** Composite return types: [name, type oid, type] per attribute, in order; empty otherwise. */
  readonly returnAttributes: readonly (readonly [string, number, string])[];
  readonly returnsSet: boolean;
  /** `pg_proc.prorows`: the planner's estimate of a set-returning function's rows (`ROWS n`); absent in hand-made rows. */
  readonly rows?: number;
  readonly volatility: string;
  /** EXECUTE privilege of the discovering role (the gateway's). */
  readonly executable: boolean;
}

export interface RawSchema {
  readonly relations: readonly RawRelation[];
  readonly columns: readonly RawColumn[];
  readonly constraints: readonly RawConstraint[];
  readonly functions: readonly RawFunction[];
  /** The types the columns and functions use (introspect-types.ts); absent in hand-made rows. */
  readonly types?: readonly RawType[];
  /** The key columns the exposed views expose unchanged (introspect-view-keys.ts); absent in hand-made rows. */
  readonly viewKeys?: readonly RawViewKeyDependency[];
}

// Shared filter: the relations the API can expose. `name = text` comparison needs PostgreSQL 12+,
// as do attgenerated and conparentid below.
const RELATION_FILTER = `
  n.nspname = ANY($1::text[])
  AND n.nspname NOT IN ('pg_catalog', 'information_schema')
  AND c.relkind IN ('r', 'p', 'v', 'm', 'f')
  AND NOT EXISTS (
    -- Citus's own views and tables (citus_tables, citus_schemas, ...: members of its extensions)
    -- are its catalog, not the application's data (docs/citus.md). Without Citus this matches nothing.
    SELECT 1 FROM pg_depend d JOIN pg_extension e ON e.oid = d.refobjid
    WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid AND d.refclassid = 'pg_extension'::regclass
      AND d.deptype = 'e' AND e.extname IN ('citus', 'citus_columnar'))`;

const RELATIONS_SQL = `
SELECT c.oid, n.nspname AS schema, c.relname AS name, c.relkind AS kind,
       c.relrowsecurity AS rls_enabled, c.relforcerowsecurity AS rls_forced,
       pg_relation_is_updatable(c.oid, true) AS updatable_events, c.reltype::int8 AS row_type_oid
FROM pg_class c
JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE ${RELATION_FILTER}
ORDER BY array_position($1::text[], n.nspname::text), c.relname`;

// The name of a type for a cast, without a type modifier: format_type(oid, -1) for pg_catalog
// types (it writes "bit" and bpchar, which keep a cast from meaning bit(1) or character(1)),
// schema.name for any other (so the name resolves the same whatever the search_path).
const typeName = (alias: string): string =>
  `CASE WHEN ${alias}n.nspname = 'pg_catalog' THEN format_type(${alias}.oid, -1)
        ELSE quote_ident(${alias}n.nspname) || '.' || quote_ident(${alias}.typname) END`;

// Arrays (and domains over arrays) have typcategory 'A'; their element is typelem, or the base
// type's typelem for a domain. The column's typmod applies to the element (varchar(10)[]).
// compare_*: the type comparisons cast a caller's text to (Column.compareType). A domain (over a
// domain...) is replaced by its base type `b`: pg_type.typbasetype names the next type down, so
// the chains of all domains are followed once, in `domain_chain`. `b` is an array when it has an
// element and is not fixed-size (format_type's own test: point, name and int2vector have typelem
// but are not arrays), and then its name is its element's name and `[]`. Naming a type in a cast
// needs USAGE on its schema (reading the column does not).
// compare_operators: b's own comparison operators (left and right operand b), wherever they live
// (PostGIS in a schema off the search path), pg_catalog's first; the compiler writes those of
// other schemas qualified, OPERATOR(schema.=), since a request's search_path may not reach them.
// compare_has_equality / compare_sortable: whether any `=` (or a default btree operator class, for
// ORDER BY) applies to b at all, as the parser finds one: b itself, a type b casts to implicitly
// (binary-coercibly for the operator class), or the polymorphic type of b's kind. xml and point
// have neither: a filter or sort on them is refused before any SQL (docs/querying.md#column-types).
// OFFSET 0 keeps the LATERAL subquery
// whole, so PostgreSQL 14+ memoizes it by column type: it runs once per type, not per column.
const COLUMNS_SQL = `
WITH RECURSIVE domain_chain(oid, base) AS (
  SELECT d.oid, d.typbasetype FROM pg_type d WHERE d.typtype = 'd'
  UNION ALL
  SELECT c.oid, d.typbasetype FROM domain_chain c JOIN pg_type d ON d.oid = c.base AND d.typtype = 'd')
SELECT a.attrelid AS rel, a.attnum AS position, a.attname AS name,
       format_type(a.atttypid, a.atttypmod) AS type, a.atttypid AS type_oid, t.typcategory AS category,
       CASE WHEN t.typcategory = 'A'
            THEN format_type(COALESCE(NULLIF(t.typelem, 0), bt.typelem), a.atttypmod) END AS element_type,
       a.attnotnull AS not_null, a.atthasdef AS has_default,
       a.attidentity AS identity, a.attgenerated AS generated,
       k.compare_type, k.compare_element_type, k.compare_has_array, k.compare_usable,
       k.compare_operators, k.compare_has_equality, k.compare_sortable
FROM pg_attribute a
JOIN pg_class c ON c.oid = a.attrelid
JOIN pg_namespace n ON n.oid = c.relnamespace
JOIN pg_type t ON t.oid = a.atttypid
LEFT JOIN pg_type bt ON bt.oid = t.typbasetype
CROSS JOIN LATERAL (
  SELECT CASE WHEN e.oid IS NULL THEN ${typeName('b')} ELSE ${typeName('e')} || '[]' END AS compare_type,
         CASE WHEN e.oid IS NOT NULL THEN ${typeName('e')} END AS compare_element_type,
         e.oid IS NULL AND b.typarray <> 0 AS compare_has_array,
         has_schema_privilege(COALESCE(en.oid, bn.oid), 'USAGE') AS compare_usable,
         (SELECT json_object_agg(x.oprname, x.nspname) FROM (
            SELECT DISTINCT ON (o.oprname) o.oprname, ns.nspname
            FROM pg_operator o JOIN pg_namespace ns ON ns.oid = o.oprnamespace
            WHERE o.oprname IN ('=', '<>', '<', '<=', '>', '>=') AND o.oprkind = 'b'
              AND o.oprleft = b.oid AND o.oprright = b.oid
            ORDER BY o.oprname, ns.nspname <> 'pg_catalog', ns.nspname) AS x) AS compare_operators,
         EXISTS (SELECT 1 FROM pg_operator o
                 JOIN (SELECT b.oid AS oid
                       UNION ALL SELECT pc.casttarget FROM pg_cast pc WHERE pc.castsource = b.oid AND pc.castcontext = 'i'
                       UNION ALL SELECT p.oid FROM pg_type p
                                 WHERE p.typnamespace = 'pg_catalog'::regnamespace AND p.typname = CASE
                                   WHEN e.oid IS NOT NULL THEN 'anyarray' WHEN b.typtype = 'e' THEN 'anyenum'
                                   WHEN b.typtype = 'r' THEN 'anyrange' WHEN b.typtype = 'm' THEN 'anymultirange'
                                   WHEN b.typtype = 'c' THEN 'record' END) AS cand ON cand.oid = o.oprleft AND cand.oid = o.oprright
                 WHERE o.oprname = '=' AND o.oprkind = 'b') AS compare_has_equality,
         EXISTS (SELECT 1 FROM pg_opclass oc
                 JOIN pg_am am ON am.oid = oc.opcmethod AND am.amname = 'btree'
                 JOIN (SELECT b.oid AS oid
                       UNION ALL SELECT pc.casttarget FROM pg_cast pc WHERE pc.castsource = b.oid AND pc.castcontext = 'i' AND pc.castmethod = 'b'
                       UNION ALL SELECT p.oid FROM pg_type p
                                 WHERE p.typnamespace = 'pg_catalog'::regnamespace AND p.typname = CASE
                                   WHEN e.oid IS NOT NULL THEN 'anyarray' WHEN b.typtype = 'e' THEN 'anyenum'
                                   WHEN b.typtype = 'r' THEN 'anyrange' WHEN b.typtype = 'm' THEN 'anymultirange'
                                   WHEN b.typtype = 'c' THEN 'record' END) AS cand ON cand.oid = oc.opcintype
                 WHERE oc.opcdefault) AS compare_sortable
  FROM pg_type b
  JOIN pg_namespace bn ON bn.oid = b.typnamespace
  LEFT JOIN pg_type e ON e.oid = b.typelem AND b.typelem <> 0 AND b.typstorage <> 'p'
  LEFT JOIN pg_namespace en ON en.oid = e.typnamespace
  WHERE b.oid = COALESCE((SELECT dc.base FROM domain_chain dc JOIN pg_type x ON x.oid = dc.base AND x.typtype <> 'd'
                          WHERE dc.oid = a.atttypid), a.atttypid)
  OFFSET 0) AS k
WHERE ${RELATION_FILTER}
  AND a.attnum > 0 AND NOT a.attisdropped
ORDER BY a.attrelid, a.attnum`;

// conkey/confkey are attnum arrays; WITH ORDINALITY keeps key order through the join to names.
// A foreign key that references a partitioned table is cloned onto each of its partitions
// (conparentid <> 0, referenced relation is a partition): those clones are an implementation
// detail and would show up as extra relations, so they are skipped.
const CONSTRAINTS_SQL = `
SELECT con.conrelid AS rel, con.conname AS name, con.contype AS type,
       NULLIF(con.confrelid, 0) AS ref_rel,
       ARRAY(SELECT a.attname::text
             FROM unnest(con.conkey) WITH ORDINALITY AS k(attnum, ord)
             JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.attnum
             ORDER BY k.ord) AS columns,
       ARRAY(SELECT a.attname::text
             FROM unnest(con.confkey) WITH ORDINALITY AS k(attnum, ord)
             JOIN pg_attribute a ON a.attrelid = con.confrelid AND a.attnum = k.attnum
             ORDER BY k.ord) AS ref_columns
FROM pg_constraint con
JOIN pg_class c ON c.oid = con.conrelid
JOIN pg_namespace n ON n.oid = c.relnamespace
LEFT JOIN pg_class rc ON rc.oid = con.confrelid
WHERE ${RELATION_FILTER}
  AND con.contype IN ('p', 'u', 'f')
  AND NOT (con.contype = 'f' AND con.conparentid <> 0 AND rc.relispartition)
ORDER BY con.conrelid, con.contype, con.conname`;

// Only plain functions (prokind 'f'): procedures need CALL and aggregates/window functions cannot
// be called as RPC. Functions installed by an extension (pg_depend deptype 'e') are the
// extension's API, not the application's. The return type is format_type(prorettype), not
// pg_get_function_result(), so it is a type name usable in SQL; "SETOF" is `returns_set`.
const FUNCTIONS_SQL = `
SELECT p.oid, n.nspname AS schema, p.proname AS name,
       pg_get_function_identity_arguments(p.oid) AS identity_args,
       p.proargnames AS arg_names, p.proargmodes::text[] AS arg_modes,
       ARRAY(SELECT format_type(u.typ, NULL)
             FROM unnest(COALESCE(p.proallargtypes, p.proargtypes::oid[])) WITH ORDINALITY AS u(typ, ord)
             ORDER BY u.ord) AS arg_types,
       ARRAY(SELECT u.typ::int8
             FROM unnest(COALESCE(p.proallargtypes, p.proargtypes::oid[])) WITH ORDINALITY AS u(typ, ord)
             ORDER BY u.ord) AS arg_type_oids,
       ARRAY(SELECT t.typcategory::text || t.typtype::text
             FROM unnest(COALESCE(p.proallargtypes, p.proargtypes::oid[])) WITH ORDINALITY AS u(typ, ord)
             JOIN pg_type t ON t.oid = u.typ
             ORDER BY u.ord) AS arg_type_kinds,
       p.pronargdefaults AS defaults, p.provariadic <> 0 AS variadic,
       format_type(p.prorettype, NULL) AS return_type, p.prorettype::int8 AS return_type_oid,
       rt.typtype::text AS return_typtype, p.proretset AS returns_set, p.prorows::float8 AS rows,
       (SELECT json_agg(json_build_array(a.attname, a.atttypid::int8, format_type(a.atttypid, NULL)) ORDER BY a.attnum)
        FROM pg_attribute a
        WHERE a.attrelid = rt.typrelid AND a.attnum > 0 AND NOT a.attisdropped) AS return_attributes,
       p.provolatile AS volatility,
       has_function_privilege(p.oid, 'EXECUTE') AS executable
FROM pg_proc p
JOIN pg_namespace n ON n.oid = p.pronamespace
JOIN pg_type rt ON rt.oid = p.prorettype
WHERE n.nspname = ANY($1::text[])
  AND n.nspname NOT IN ('pg_catalog', 'information_schema')
  AND p.prokind = 'f'
  AND NOT EXISTS (
    SELECT 1 FROM pg_depend d
    WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e')
ORDER BY array_position($1::text[], n.nspname::text), p.proname, p.oid`;

/** The number of round trips `introspect` makes, for benchmarks and logs. */
export const INTROSPECTION_QUERY_COUNT = 6;

// Explicit conversions: a host pool may carry its own type parsers (e.g. oid as string).
const str = (v: unknown): string => (v === null || v === undefined ? '' : String(v));
const strs = (v: unknown): string[] => (Array.isArray(v) ? v.map(str) : []);

export async function introspect(db: Queryable, schemas: readonly string[]): Promise<RawSchema> {
  const params = [[...schemas]];
  // Independent queries: on a pool they run side by side; on a single client pg queues them.
  const [relations, columns, constraints, functions, types, viewKeys] = await Promise.all([
    db.query(RELATIONS_SQL, params),
    db.query(COLUMNS_SQL, params),
    db.query(CONSTRAINTS_SQL, params),
    db.query(FUNCTIONS_SQL, params),
    introspectTypes(db, schemas),
    introspectViewKeys(db, schemas),
  ]);
  return {
    types,
    viewKeys,
    relations: relations.rows.map(
      (r): RawRelation => ({
        oid: Number(r.oid),
        schema: str(r.schema),
        name: str(r.name),
        kind: str(r.kind),
        rlsEnabled: r.rls_enabled === true,
        rlsForced: r.rls_forced === true,
        updatableEvents: Number(r.updatable_events ?? 0),
        rowTypeOid: Number(r.row_type_oid),
      }),
    ),
    columns: columns.rows.map(
      (r): RawColumn => ({
        relationOid: Number(r.rel),
        position: Number(r.position),
        name: str(r.name),
        type: str(r.type),
        typeOid: Number(r.type_oid),
        category: str(r.category),
        elementType: r.element_type === null || r.element_type === undefined ? null : str(r.element_type),
        notNull: r.not_null === true,
        hasDefault: r.has_default === true,
        identity: str(r.identity),
        generated: str(r.generated),
        compareType: str(r.compare_type),
        compareElementType: r.compare_element_type === null || r.compare_element_type === undefined ? null : str(r.compare_element_type),
        compareHasArray: r.compare_has_array === true,
        compareUsable: r.compare_usable === true,
        compareOperators: r.compare_operators !== null && typeof r.compare_operators === 'object' ? (r.compare_operators as Record<string, string>) : {},
        compareHasEquality: r.compare_has_equality !== false,
        compareSortable: r.compare_sortable !== false,
      }),
    ),
    constraints: constraints.rows.map(
      (r): RawConstraint => ({
        relationOid: Number(r.rel),
        name: str(r.name),
        type: str(r.type) as RawConstraint['type'],
        columns: strs(r.columns),
        referencedRelationOid: r.ref_rel === null || r.ref_rel === undefined ? null : Number(r.ref_rel),
        referencedColumns: strs(r.ref_columns),
      }),
    ),
    functions: functions.rows.map(
      (r): RawFunction => ({
        oid: Number(r.oid),
        schema: str(r.schema),
        name: str(r.name),
        identityArgs: str(r.identity_args),
        argNames: Array.isArray(r.arg_names) ? strs(r.arg_names) : null,
        argModes: Array.isArray(r.arg_modes) ? strs(r.arg_modes) : null,
        argTypes: strs(r.arg_types),
        defaults: Number(r.defaults),
        variadic: r.variadic === true,
        argTypeOids: strs(r.arg_type_oids).map(Number),
        argTypeKinds: strs(r.arg_type_kinds),
        returnType: str(r.return_type),
        returnTypeOid: Number(r.return_type_oid),
        returnTyptype: str(r.return_typtype),
        returnAttributes: Array.isArray(r.return_attributes)
          ? (r.return_attributes as unknown[][]).map((a) => [str(a[0]), Number(a[1]), str(a[2])] as const)
          : [],
        returnsSet: r.returns_set === true,
        rows: Number(r.rows ?? 0),
        volatility: str(r.volatility),
        executable: r.executable === true,
      }),
    ),
  };
}
