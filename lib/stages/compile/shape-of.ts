/**
 * shapeOf: Command -> the shape of its statement's result (lib/pipeline/plan.ts).
 * In: the command compile built the statement from. Out: which column of the result holds what,
 * for rendering. Never: describes a column the statement of compile-<kind>.ts does not produce:
 * each case names the statement it describes, and the list's positions come from listColumns,
 * beside the list statement itself.
 */
import type { Command, RpcCommand } from '../../command/command';
import type { BinaryCallShape, ResultShape } from '../../pipeline/plan';
import { exportColumns, jsonColumns, plainColumns } from './compile-export';
import { listColumns } from './compile-list';
import { readColumns } from './compile-read';
import { mayUpdate } from './compile-answered-write';

export function shapeOf(command: Command): ResultShape {
  switch (command.kind) {
    // compile-export.ts: per row, its columns: their text (csv), or what builds their JSON (json, ndjson).
    case 'read':
      // compile-read.ts: the body, the row count, the total; with the plan media type, EXPLAIN's one value.
      if (command.media !== 'page') return command.media === 'plan' ? VALUE : READ;
      // compile-get.ts: `SELECT to_json(_r.*)::text ... WHERE <key>`, no row when none is visible.
      if (command.key) return ROW;
      // compile-plan.ts: EXPLAIN (FORMAT JSON)'s one value; compile-aggregate.ts: one json_build_object.
      if (command.plan || command.aggregate) return VALUE;
      if (command.export) return Object.freeze({ kind: 'stream', format: command.export, columns: exportColumns(command), plain: plainColumns(command), json: jsonColumns(command) });
      return Object.freeze({ kind: 'list', ...listColumns(command) });
    // select-written.ts: the written rows' JSON, then their count.
    case 'insert':
    case 'update':
    case 'delete':
      // compile-answered-write.ts: the read's columns (body, count, total) over the written rows;
      // compile-plan.ts over it: EXPLAIN's one value.
      if (command.answer) return command.answer.plan ? VALUE : mayUpdate(command) ? UPSERTED : READ;
      // compile-bulk-update.ts: one row per row written: its JSON, '1', its index among the rows, whether two rows share a key.
      return command.kind === 'update' && command.rows ? WRITTEN_EACH : WRITTEN;
    case 'rpc':
      // compile-plan.ts over the call: EXPLAIN's one value.
      if (command.answer?.plan) return VALUE;
      if (command.answer?.read) return READ;
      return command.resultFormat === 'binary' && command.fn.returns !== 'void' ? binaryCallShape(command) : CALL;
    case 'contracts':
      return NONE;
  }
}

/**
 * compile-rpc.ts, compileBinary: a set of rows has the function's result columns, a scalar (or a
 * set of them) its value, a single row its JSON; the session TimeZone follows them.
 */
function binaryCallShape(command: RpcCommand): BinaryCallShape {
  const { fn } = command;
  const columns = fn.returns === 'row' && fn.returnsSet ? fn.resultColumns.length : 1;
  return Object.freeze({ kind: 'binary-call', columns, timeZone: columns });
}

const ROW: ResultShape = Object.freeze({ kind: 'row', data: 0 });
const VALUE: ResultShape = Object.freeze({ kind: 'value', value: 0 });
const WRITTEN: ResultShape = Object.freeze({ kind: 'written', data: 0, count: 1 });
const WRITTEN_EACH: ResultShape = Object.freeze({ kind: 'written', data: 0, count: 1, row: 2, duplicateKeys: 3 });
const CALL: ResultShape = Object.freeze({ kind: 'call', value: 0 });
const NONE: ResultShape = Object.freeze({ kind: 'none' });
const READ: ResultShape = Object.freeze({ kind: 'read', ...readColumns });
// compile-answered-write.ts: the read's columns, then the number of rows inserted.
const UPSERTED: ResultShape = Object.freeze({ kind: 'read', ...readColumns, inserted: 3 });
