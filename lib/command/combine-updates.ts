/**
 * Single updates -> one bulk update (docs/writing.md, "Bulk updates"). In: the commands of the
 * rows of `PATCH /{table}` with an array, each already through parse, policy and allow-list as
 * the single `PATCH /{table}/:key`. Out: one UpdateCommand with `rows`, which compile makes ONE
 * statement of; or undefined when they are not all the same kind of update (then each runs as its
 * own statement, as before). Never: widens what a row may do: every row keeps the key, columns
 * and body its own checks passed, and the combined command takes the row conditions and
 * `returning` only when every row has the same ones.
 */
import type { Command, Condition, KeyedChange, UpdateCommand } from './command';

export function combineUpdates(commands: readonly Command[]): UpdateCommand | undefined {
  const first = commands[0];
  if (first === undefined || !isKeyedUpdate(first)) return undefined;
  const rows: KeyedChange[] = [];
  const columns = new Set(first.columns);
  for (const command of commands) {
    if (!isKeyedUpdate(command) || command.table !== first.table) return undefined;
    if (!sameList(command.returning, first.returning) || !sameConditions(command.rowFilters ?? [], first.rowFilters ?? [])) return undefined;
    if (!sameList(command.key.map((k) => k.column), first.key.map((k) => k.column))) return undefined;
    for (const c of command.columns) columns.add(c);
    rows.push(Object.freeze({ key: command.key, columns: command.columns, body: command.body }));
  }
  return Object.freeze({ ...first, key: [], row: {}, body: '', columns: Object.freeze([...columns]), rows: Object.freeze(rows) });
}

/** An update of one row by its key, answered with `returning` (no read-back answer, no `where`, not yet combined). */
function isKeyedUpdate(command: Command): command is UpdateCommand {
  return command.kind === 'update' && command.key.length > 0 && command.where === undefined && command.answer === undefined && command.rows === undefined;
}

function sameList<T>(a: readonly T[], b: readonly T[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/** The policy's row conditions (`column = value` compares); anything else is not compared, so not combined. */
function sameConditions(a: readonly Condition[], b: readonly Condition[]): boolean {
  return a.length === b.length && a.every((x, i) => {
    const y = b[i]!;
    return x.kind === 'compare' && y.kind === 'compare' && x.field.column === y.field.column && x.field.path.length === 0 && y.field.path.length === 0 && x.op === y.op && x.value === y.value && x.negate === y.negate;
  });
}
