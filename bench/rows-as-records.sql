-- A read level's rows built with json_build_object (a key per column) against to_json of a lateral
-- record (docs/performance.md, "Rows as records"). Run in a scratch database:
--   psql -d scratch -f bench/rows-as-records.sql
-- Each timed statement builds 20,000 pages of 20 rows; the table is dropped at the end.
CREATE TEMP TABLE o AS
  SELECT g AS id, (g % 4)::text AS tenant_id, g % 100 AS user_id, (ARRAY['new', 'paid', 'shipped'])[g % 3 + 1] AS status,
         (g * 1.5)::numeric(10, 2) AS total, now() AS placed_at, 'note ' || g AS notes
  FROM generate_series(1, 200000) g;
CREATE INDEX ON o (status, id);
ANALYZE o;
\timing on
\echo json_build_object, a key per column
SELECT sum(length(x)) FROM (SELECT (SELECT coalesce(json_agg(_p.j), '[]')::text FROM (SELECT json_build_object('id'::text, _t.id, 'tenant_id'::text, _t.tenant_id, 'user_id'::text, _t.user_id, 'status'::text, _t.status, 'total'::text, _t.total, 'placed_at'::text, _t.placed_at, 'notes'::text, _t.notes) j FROM o _t WHERE _t.status = 'paid' AND _t.id > g ORDER BY _t.id LIMIT 20) _p) AS x FROM generate_series(1, 20000) g) q;
\echo to_json of a lateral record
SELECT sum(length(x)) FROM (SELECT (SELECT coalesce(json_agg(_p.j), '[]')::text FROM (SELECT to_json(_r.*) j FROM o _t CROSS JOIN LATERAL (SELECT _t.id, _t.tenant_id, _t.user_id, _t.status, _t.total, _t.placed_at, _t.notes) _r WHERE _t.status = 'paid' AND _t.id > g ORDER BY _t.id LIMIT 20) _p) AS x FROM generate_series(1, 20000) g) q;
\echo the default list: json_agg of the page rows
SELECT sum(length(x)) FROM (SELECT (SELECT coalesce(json_agg(_p.*), '[]')::text FROM (SELECT _t.id, _t.tenant_id, _t.user_id, _t.status, _t.total, _t.placed_at, _t.notes FROM o _t WHERE _t.status = 'paid' AND _t.id > g ORDER BY _t.id LIMIT 20) _p) AS x FROM generate_series(1, 20000) g) q;
\echo again: json_build_object
SELECT sum(length(x)) FROM (SELECT (SELECT coalesce(json_agg(_p.j), '[]')::text FROM (SELECT json_build_object('id'::text, _t.id, 'tenant_id'::text, _t.tenant_id, 'user_id'::text, _t.user_id, 'status'::text, _t.status, 'total'::text, _t.total, 'placed_at'::text, _t.placed_at, 'notes'::text, _t.notes) j FROM o _t WHERE _t.status = 'paid' AND _t.id > g ORDER BY _t.id LIMIT 20) _p) AS x FROM generate_series(1, 20000) g) q;
\echo again: to_json of a lateral record
SELECT sum(length(x)) FROM (SELECT (SELECT coalesce(json_agg(_p.j), '[]')::text FROM (SELECT to_json(_r.*) j FROM o _t CROSS JOIN LATERAL (SELECT _t.id, _t.tenant_id, _t.user_id, _t.status, _t.total, _t.placed_at, _t.notes) _r WHERE _t.status = 'paid' AND _t.id > g ORDER BY _t.id LIMIT 20) _p) AS x FROM generate_series(1, 20000) g) q;
