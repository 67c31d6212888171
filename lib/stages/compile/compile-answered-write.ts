/**
 * A write with answer options (insert, update, delete with `answer`) -> one statement:
 * the write as a data-modifying CTE returning the written rows, read back by the read compiler
 * with the write's `select` (embeds are LATERAL subqueries over `_w`, so RLS applies to them too):
 *
 *   WITH _w AS (<INSERT | UPDATE ... WHERE <conditions> | DELETE ... WHERE <conditions>> RETURNING _t.*)
 *        [, _chk AS (SELECT CASE WHEN count(*) > <max> THEN int4in(...) END AS x FROM _w)]
 *   SELECT _q.* [, _chk.x] FROM (<read of the representation over _w>) AS _q [CROSS JOIN _chk]
 *
 * An upsert that may update (ON CONFLICT ... DO UPDATE) also counts the rows it inserted, after
 * the read's columns: the written rows are returned whole with `xmax = 0` beside them (0 for a
 * row this statement inserted, its transaction id for one it updated: PostgreSQL manual, "System
 * Columns"), and `_w` takes the rows apart again, so the read sees the table's columns only.
 *
 * Its result has the read's shape (body, count, total[, inserted]): rendering answers from it. `max-affected`:
 * when more rows were written the statement itself fails (an input-function error whose text
 * carries `maxAffectedMarker`, lib/errors/statement-markers.ts, which the door that asked for the
 * check translates), so the transaction rolls back and
 * nothing is half-written. In: the command. Never: caller text outside a `$n` parameter.
 */
import type { Condition, DeleteCommand, InsertCommand, WriteAnswer, ReadCommand, UpdateCommand } from '../../command/command';
import { maxAffectedMarker, singularMarker } from '../../errors/statement-markers';
import { empty, ident, join, sql, type Sql } from '../../sql/sql';
import { insertStatement } from './compile-insert';
import { compileCondition } from './compile-condition';
import { compileRead } from './compile-read';
import { sizeChecked } from './size-checked';


type AnsweredWrite = (InsertCommand | UpdateCommand | DeleteCommand) & { readonly answer: WriteAnswer };

export function compileWriteAnswer(command: AnsweredWrite, maxBytes?: number): Sql {
  const { table } = command;
  const answer = command.answer;
  const statement = writeStatement(command);
  const read: ReadCommand = {
    kind: 'read',
    table,
    root: answer.node,
    schema: answer.schema,
    count: null,
    media: answer.media,
    plan: null,
    explicitLimit: false,
    explicitOffset: false,
    head: false,
  };
  const body = compileRead(read, (a) => sql`_w AS ${a}`);
  const upsert = mayUpdate(command);
  // ROW(_t.*), not `_t`: a bare `_t` would be a column of that name if the table had one.
  const target = ident(table.schema, table.name);
  const written = upsert ? sql`WITH _w0 AS (${statement} RETURNING ROW(_t.*)::${target} AS r, _t.xmax = 0 AS i), _w AS (SELECT (_w0.r).* FROM _w0)` : sql`WITH _w AS (${statement} RETURNING _t.*)`;
  const inserted = upsert ? sql`, (SELECT count(*) FROM _w0 WHERE _w0.i)::text` : empty;
  const singular = answer.media === 'object' && answer.returnMode === 'representation';
  // The body is size-checked where it is built (size-checked.ts): over `maxBytes`, the statement
  // fails and the write is rolled back. `_q` is an aggregate, evaluated once.
  const out = maxBytes === undefined ? sql`_q.*` : sql`${sizeChecked(sql`_q.b`, maxBytes)}, _q.n, _q.t`;
  const q = maxBytes === undefined ? sql`_q` : sql`_q(b, n, t)`;
  if (answer.maxAffected === null && !singular) return sql`${written} SELECT ${out}${inserted} FROM (${body}) AS ${q}`;
  // The count goes into the error text so the input function's argument is not a constant (a
  // constant would be folded, and fail, at plan time whatever the count).
  const fail = (marker: string): Sql => sql`pg_catalog.int4in((${marker}::text || ':' || count(*))::cstring)`;
  const tests: Sql[] = [];
  if (answer.maxAffected !== null) tests.push(sql`WHEN count(*) > ${answer.maxAffected}::bigint THEN ${fail(maxAffectedMarker)}`);
  if (singular) tests.push(sql`WHEN count(*) <> 1 THEN ${fail(singularMarker)}`);
  const check = sql`_chk AS (SELECT CASE ${join(tests, sql` `)} END AS x FROM _w)`;
  return sql`${written}, ${check} SELECT ${out}${inserted}, _chk.x FROM (${body}) AS ${q} CROSS JOIN _chk`;
}

/** An insert that updates the rows it conflicts with: its answer says how many it inserted (shape-of.ts). */
export function mayUpdate(command: AnsweredWrite | InsertCommand | UpdateCommand | DeleteCommand): boolean {
  return command.kind === 'insert' && command.onConflict?.action === 'update';
}

function writeStatement(command: AnsweredWrite): Sql {
  const { table } = command;
  const target = ident(table.schema, table.name);
  switch (command.kind) {
    case 'insert':
      return insertStatement(command);
    case 'update': {
      const set = join(command.columns.map((c) => sql`${ident(c.name)} = _r.${ident(c.name)}`));
      return sql`UPDATE ${target} AS _t SET ${set} FROM jsonb_populate_record(NULL::${target}, ${command.body}::jsonb) AS _r${whereOf(command.where ?? [], command.rowFilters)}`;
    }
    case 'delete':
      return sql`DELETE FROM ${target} AS _t${whereOf(command.where ?? [], command.rowFilters)}`;
  }
}

function whereOf(where: readonly Condition[], rowFilters: UpdateCommand['rowFilters']): Sql {
  const conditions = [...where.map((c) => compileCondition(c, sql`_t`, new Map())), ...(rowFilters ?? []).map((c) => compileCondition(c, sql`_t`, new Map()))];
  return conditions.length ? sql` WHERE ${join(conditions, sql` AND `)}` : empty;
}
