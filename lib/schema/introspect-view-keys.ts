/**
 * Reads which columns of the exposed views are plain references to a key column of a table, so
 * that a view inherits its base tables' primary and foreign keys for embedding, as PostgREST does
 * (docs/postgrest-dialect.md, "Embedding through views").
 *
 * In: a queryable and the schema names. Out: one `RawViewKeyDependency` row per view of those
 * schemas and primary or foreign key of a table (in any schema) all of whose columns the view
 * exposes unchanged, followed down through views over views. Never: infers anything from an
 * expression (a column PostgreSQL does not mark as a plain reference to a table column, one of a
 * set operation included), from a key the view exposes only partly, nor filters by privilege (the
 * request reads the view as its caller). A view whose stored query cannot be read this way adds
 * nothing: when this query cannot read one (a data exception), no view inherits a key.
 *
 * How: a view's query tree (`pg_rewrite.ev_action`) marks each output column that is a plain
 * column reference with its origin (`resorigtbl`, `resorigcol`). The text of the tree is turned
 * into JSON keeping only those fields, the way PostgREST's `allViewsKeyDependencies` query (v13)
 * does it, and only the top-level query's target list is read.
 * PostgreSQL manual: "pg_rewrite" (https://www.postgresql.org/docs/current/catalog-pg-rewrite.html).
 */

/** A pool or client (the same shape as introspect.ts's `Queryable`, which imports this file). */
interface Queryable {
  query(text: string, values?: unknown[]): Promise<{ rows: any[] }>;
}

export interface RawViewKeyDependency {
  /** The view (or materialized view) that exposes the key's columns. */
  readonly viewOid: number;
  /** The key's constraint (`pg_constraint.oid`) and name. */
  readonly constraintOid: number;
  readonly constraintName: string;
  /** 'p': the table's primary key; 'f': a foreign key's own columns; 'f_ref': the columns it references. */
  readonly type: 'p' | 'f' | 'f_ref';
  /** Per key column, in key order: the table column's name and the view columns that are it (one or more). */
  readonly columns: readonly (readonly [string, readonly string[]])[];
  /** Foreign keys ('f', 'f_ref') only, else 0 / empty: the constraint, whatever the schemas of its tables. */
  readonly foreignKey: {
    readonly tableOid: number;
    readonly columns: readonly string[];
    readonly referencedTableOid: number;
    readonly referencedColumns: readonly string[];
    /** The FK columns are exactly a primary or unique key of their table (one-to-one). */
    readonly oneToOne: boolean;
  } | null;
}

// The json transformation below is PostgREST's (v13.0.8, MIT licence), unchanged but for the
// parameters: a view in any non-system schema is followed (a view over a view of a schema that is
// not exposed still reaches its table), and only views of the exposed schemas ($1) are answered.
const VIEW_KEYS_SQL = String.raw`
WITH RECURSIVE
pks_fks AS (
  SELECT contype::text AS contype, oid AS con_oid, conname, array_length(conkey, 1) AS ncol,
         conrelid AS resorigtbl, col AS resorigcol, ord
  FROM pg_constraint
  LEFT JOIN LATERAL unnest(conkey) WITH ORDINALITY AS _(col, ord) ON true
  WHERE contype IN ('p', 'f')
  UNION
  SELECT concat(contype, '_ref') AS contype, oid AS con_oid, conname, array_length(confkey, 1) AS ncol,
         confrelid, col, ord
  FROM pg_constraint
  LEFT JOIN LATERAL unnest(confkey) WITH ORDINALITY AS _(col, ord) ON true
  WHERE contype = 'f'
),
views AS (
  SELECT c.oid AS view_id, n.nspname AS view_schema, r.ev_action AS view_definition
  FROM pg_class c
  JOIN pg_namespace n ON n.oid = c.relnamespace
  JOIN pg_rewrite r ON r.ev_class = c.oid
  WHERE c.relkind IN ('v', 'm') AND r.ev_type = '1' AND r.rulename = '_RETURN'
    AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\_toast%'
),
transform_json AS (
  SELECT view_id, view_schema,
    replace(replace(replace(replace(replace(replace(replace(
    regexp_replace(
    replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(replace(
      view_definition::text,
      '<>', '()'),
      ',', ''),
      E'\\{', ''),
      E'\\}', ''),
      ' :targetList ', ',"targetList":'),
      ' :resno ', ',"resno":'),
      ' :resorigtbl ', ',"resorigtbl":'),
      ' :resorigcol ', ',"resorigcol":'),
      '{', '{ :'),
      '((', '{(('),
      '({', '{({'),
    ' :[^}{,]+', ',"":', 'g'),
      ',"":}', '}'),
      ',"":,', ','),
      '{(', '('),
      '{,', '{'),
      '(', '['),
      ')', ']'),
      ' ', ','
    )::json AS view_definition
  FROM views
),
target_entries AS (
  SELECT view_id, view_schema, json_array_elements(view_definition->0->'targetList') AS entry
  FROM transform_json
),
results AS (
  SELECT view_id, view_schema, (entry->>'resno')::int AS view_column,
         (entry->>'resorigtbl')::oid AS resorigtbl, (entry->>'resorigcol')::int AS resorigcol
  FROM target_entries
),
recursion(view_id, view_schema, view_column, resorigtbl, resorigcol, is_cycle, path) AS (
  SELECT r.*, false, ARRAY[resorigtbl]
  FROM results r
  WHERE view_schema = ANY($1::text[])
  UNION ALL
  SELECT view.view_id, view.view_schema, view.view_column, tab.resorigtbl, tab.resorigcol,
         tab.resorigtbl = ANY(path), path || tab.resorigtbl
  FROM recursion view
  JOIN results tab ON view.resorigtbl = tab.view_id AND view.resorigcol = tab.view_column
  WHERE NOT is_cycle
),
repeated_references AS (
  SELECT view_id, resorigtbl, resorigcol, array_agg(attname::text ORDER BY attnum) AS view_columns
  FROM recursion
  JOIN pg_attribute vcol ON vcol.attrelid = view_id AND vcol.attnum = view_column
  GROUP BY view_id, resorigtbl, resorigcol
),
deps AS (
  SELECT rep.view_id, pks_fks.con_oid, pks_fks.conname, pks_fks.contype,
         json_agg(json_build_array(col.attname, rep.view_columns) ORDER BY pks_fks.ord) AS columns
  FROM repeated_references rep
  JOIN pks_fks USING (resorigtbl, resorigcol)
  JOIN pg_attribute col ON col.attrelid = rep.resorigtbl AND col.attnum = rep.resorigcol
  GROUP BY rep.view_id, pks_fks.con_oid, pks_fks.conname, pks_fks.contype, pks_fks.ncol
  -- only keys all of whose columns the view exposes: no partial primary or foreign keys
  HAVING pks_fks.ncol = count(*)
)
SELECT d.view_id, d.con_oid, d.conname, d.contype, d.columns,
       CASE WHEN d.contype <> 'p' THEN con.conrelid END AS fk_table,
       CASE WHEN d.contype <> 'p' THEN ARRAY(
         SELECT a.attname::text FROM unnest(con.conkey) WITH ORDINALITY AS k(attnum, ord)
         JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.attnum ORDER BY k.ord) END AS fk_columns,
       CASE WHEN d.contype <> 'p' THEN con.confrelid END AS ref_table,
       CASE WHEN d.contype <> 'p' THEN ARRAY(
         SELECT a.attname::text FROM unnest(con.confkey) WITH ORDINALITY AS k(attnum, ord)
         JOIN pg_attribute a ON a.attrelid = con.confrelid AND a.attnum = k.attnum ORDER BY k.ord) END AS ref_columns,
       d.contype <> 'p' AND EXISTS (
         SELECT 1 FROM pg_constraint u
         WHERE u.conrelid = con.conrelid AND u.contype IN ('p', 'u')
           AND (SELECT array_agg(x ORDER BY x) FROM unnest(u.conkey) AS x) = (SELECT array_agg(x ORDER BY x) FROM unnest(con.conkey) AS x)
       ) AS one_to_one
FROM deps d
JOIN pg_constraint con ON con.oid = d.con_oid
WHERE con.contype = 'p' OR con.conparentid = 0
ORDER BY d.view_id, d.conname, d.contype`;

const str = (v: unknown): string => (v === null || v === undefined ? '' : String(v));
const strs = (v: unknown): string[] => (Array.isArray(v) ? v.map(str) : []);

export async function introspectViewKeys(db: Queryable, schemas: readonly string[]): Promise<RawViewKeyDependency[]> {
  let rows: any[];
  try {
    ({ rows } = await db.query(VIEW_KEYS_SQL, [[...schemas]]));
  } catch (err) {
    // A view definition this reading cannot turn into JSON (a data exception, class 22): no view
    // inherits a key (fail closed: nothing inferred). Any other error fails discovery as usual.
    if (String((err as { code?: unknown }).code ?? '').startsWith('22')) return [];
    throw err;
  }
  return rows.map((r): RawViewKeyDependency => {
    const type = str(r.contype) as RawViewKeyDependency['type'];
    return {
      viewOid: Number(r.view_id),
      constraintOid: Number(r.con_oid),
      constraintName: str(r.conname),
      type,
      columns: Array.isArray(r.columns) ? (r.columns as unknown[][]).map((c) => [str(c[0]), strs(c[1])] as const) : [],
      foreignKey:
        type === 'p'
          ? null
          : {
              tableOid: Number(r.fk_table),
              columns: strs(r.fk_columns),
              referencedTableOid: Number(r.ref_table),
              referencedColumns: strs(r.ref_columns),
              oneToOne: r.one_to_one === true,
            },
    };
  });
}
