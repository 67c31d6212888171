/**
 * The one place caller text becomes schema objects (PostgREST's ApiRequest -> Plan split).
 * Unknown table -> 404, unknown column -> 400 with the nearest name as a hint.
 */
import { GatewayError } from '../../errors/gateway-error';
import { columnCandidates, type NameHint, suggestName, tableCandidates } from '../../errors/name-hint';
import type { Column, SchemaCache, Table } from '../../schema/schema-types';
import { splitList } from './split-list';

export function resolveTable(schema: SchemaCache, name: string): Table {
  const table = schema.tablesByName.get(name);
  if (table) return table;
  throw new UnknownTableError(name, suggestName(name, tableCandidates(() => schema.tablesByName.entries()), (near) => `Did you mean \`${near}\`?`));
}

/**
 * The 404 of a table name the schema cache does not know. `table` is not in the body; the gateway
 * uses it to ask whether the database has the table after all (docs/errors.md, NOT_FOUND).
 */
export class UnknownTableError extends GatewayError {
  constructor(
    readonly table: string,
    suggestion: { hint?: string; names?: NameHint } = {},
  ) {
    super('NOT_FOUND', `No table named \`${clip(table)}\` is exposed.`, suggestion);
  }

  /** The same 404, saying the table exists in the database and the schema may need a reload. */
  withReloadHint(): GatewayError {
    return new GatewayError('NOT_FOUND', this.message, {
      hint: 'A table or view of this name exists in an exposed schema but not in the schema the gateway has loaded: the schema may need a reload (reloadSchema(), SIGHUP to tablegate serve, or reload_listen; see docs/scaling-out.md).',
    });
  }
}

export function resolveColumn(table: Table, name: string, where: string): Column {
  const column = table.columnsByName.get(name);
  if (column) return column;
  throw new GatewayError('UNKNOWN_COLUMN', `Table \`${table.name}\` has no column \`${clip(name)}\` (in ${where}).`, {
    details: { table: table.name, column: clip(name), in: where },
    ...suggestName(name, columnCandidates(table), (near) => `Did you mean \`${near}\`?`),
  });
}

/**
 * A parameter that names one column (`distinct`, the aggregate's `column`), spelled like one item
 * of `select` or `sort`: `"a,b"` and `"we""ird"` are quoted the same way everywhere, and a bare
 * name is taken as written.
 */
export function resolveColumnParameter(table: Table, text: string, parameter: string): Column {
  const names = splitList(text, parameter);
  if (names.length !== 1 || names[0] === '') {
    throw new GatewayError('PARSE_ERROR', `The \`${parameter}\` parameter names exactly one column.`, {
      hint: 'Quote a name that holds a comma or a double quote, as in select: "a,b" or "say ""hi""".',
    });
  }
  return resolveColumn(table, names[0]!, `\`${parameter}\``);
}

/** Caller text echoed in messages is clipped so a 100 kB name does not come back 100 kB long. */
export function clip(text: string, max = 64): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}
