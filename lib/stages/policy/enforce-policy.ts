/**
 * enforcePolicy: a policy applied to one command, before any SQL exists (docs/access-policy.md).
 * In: the policy as a `permit` function (the native [access] policy or the legacy YAML one: see
 * accessPermit / legacyPermit, which hold the caller's identity), the command; a write's body rows
 * come from the command (never the request, never parsed again). Out: the command, narrowed
 * (a default projection, search or `returning` loses the columns the caller may not read; a
 * legacy `filter` becomes row conditions of every table read or written), or FORBIDDEN.
 * Never: widens a command.
 *
 * - Operations: every read (a page, its plan, its aggregate, one row by key, a child route, a tree of levels) is `read`; POST is `create` (an
 *   upsert that updates is also `update`); PATCH is `update`; DELETE is `delete`. Function calls
 *   are governed by the rpc_* keys, not by this policy.
 * - Every table a command reads needs `read`: expanded tables and the parent of a child route too,
 *   so expanding into a denied table is a 403, never a silent null.
 * - A column the caller names (select, filter, sort, distinct, search_columns, an aggregate's column,
 *   returning) must be readable; a written column writable; a returned column readable and
 *   returnable. Join keys and the primary-key tie-breaker are not named by the caller and stay.
 */
import type { Column, Table } from '../../schema/schema-types';
import type { BodyRow, Command, Condition, ReadCommand, WriteAnswer, ReadNode, Search } from '../../command/command';
import { conditionColumns } from '../../command/read-columns';
import { GatewayError } from '../../errors/gateway-error';
import { ALL_COLUMNS, allows, type ColumnSet, type Operation } from './access-policy';
import { enforceReadPolicy, type RootChecks } from './enforce-read-policy';

/** What a policy grants on one table for one operation. */
export interface Grant {
  readonly read: ColumnSet;
  readonly write: ColumnSet;
  readonly returning: ColumnSet;
  /** Row conditions (column = value, a `compare` condition) every row read or written must meet. */
  readonly rows: readonly RowCondition[];
}

/** `column = value`: the one shape of a policy's row condition, so a write body can be checked against it. */
export type RowCondition = Extract<Condition, { readonly kind: 'compare' }>;

/** A policy: the grant for (table, operation), or a thrown FORBIDDEN. */
export type Permit = (table: Table, operation: Operation) => Grant;

export function enforcePolicy(permit: Permit, command: Command): Command {
  const gate = new Gate(permit);
  switch (command.kind) {
    case 'insert': {
      const grant = permit(command.table, 'create');
      // The update of an upsert reaches a row the request did not address: under row conditions
      // it could take over a row outside them, so it is refused rather than checked after the fact.
      if (command.onConflict?.action === 'update' && permit(command.table, 'update').rows.length > 0) {
        throw forbidden(`Upserts that update rows of \`${command.table.name}\` are not allowed under the policy's row filter; use PATCH.`, { table: command.table.name, operation: 'update' });
      }
      gate.writable(command.table, grant, command.columns);
      checkInsertedRows(command.table, grant, command.rows, command.batch);
      if (command.answer) {
        // The conflict target is compared with stored rows: it must be writable like the body.
        if (command.onConflict) check(command.table, grant.write, command.onConflict.columns, 'write', 'on_conflict');
        return Object.freeze({ ...command, answer: representation(permit, command.table, command.answer) });
      }
      return Object.freeze({ ...command, returning: gate.returning(command.table, grant, command.returning, command.explicitReturning) });
    }
    case 'update': {
      const grant = permit(command.table, 'update');
      gate.writable(command.table, grant, command.columns);
      checkInsertedRows(command.table, { ...grant, rows: grant.rows.filter((c) => command.columns.includes(c.field.column)) }, [command.row], false);
      if (command.answer) {
        gate.readable(command.table, grant, conditionColumns(command.where ?? []), 'a filter');
        return Object.freeze({ ...command, answer: representation(permit, command.table, command.answer), ...rows(command.rowFilters, grant) });
      }
      return Object.freeze({ ...command, returning: gate.returning(command.table, grant, command.returning, command.explicitReturning), ...rows(command.rowFilters, grant) });
    }
    case 'delete': {
      const grant = permit(command.table, 'delete');
      if (command.answer) {
        gate.readable(command.table, grant, conditionColumns(command.where ?? []), 'a filter');
        return Object.freeze({ ...command, answer: representation(permit, command.table, command.answer), ...rows(command.rowFilters, grant) });
      }
      return Object.freeze({ ...command, returning: gate.returning(command.table, grant, command.returning, command.explicitReturning), ...rows(command.rowFilters, grant) });
    }
    case 'rpc':
      // The call itself is governed by the rpc_* keys; tables embedded in its rows by the policy.
      if (command.answer?.read) return Object.freeze({ ...command, answer: Object.freeze({ ...command.answer, read: Object.freeze({ ...command.answer.read, root: callRows(permit, command.answer.read.root) }) }) });
      return command;
    case 'contracts':
      return command;
    case 'read':
      return Object.freeze(gate.read(command));
  }
}

/**
 * The representation a write with answer options returns: read like a GET of the written table (every
 * named column readable, embeds checked level by level) and each selected column returnable.
 * Without a body (return=minimal) nothing is read back, so nothing is checked.
 */
function representation(permit: Permit, table: Table, answer: WriteAnswer): WriteAnswer {
  if (answer.node.items.length === 0) return answer;
  const node = enforceReadPolicy(permit, answer.node);
  const grant = permit(table, 'read');
  const named = node.items.filter((i) => i.kind === 'field' && i.fromStar !== true).map((i) => (i as Extract<typeof i, { kind: 'field' }>).field.column);
  check(table, grant.returning, named, 'return', 'select');
  const items = node.items.filter((i) => i.kind !== 'field' || i.fromStar !== true || allows(grant.returning, i.field.column.name));
  if (items.length === 0) throw forbidden(`The policy lets you read back no column of \`${table.name}\`.`, { table: table.name });
  return Object.freeze({ ...answer, node: Object.freeze({ ...node, items: Object.freeze(items) }) });
}

/** The rows of a function: its own columns are the function's (not checked); embedded tables are, as in a read. */
function callRows(permit: Permit, root: ReadNode): ReadNode {
  if (!root.items.some((i) => i.kind === 'embed') && !root.where.some((c) => c.kind === 'embedded')) return root;
  const all: Grant = { read: ALL_COLUMNS, write: ALL_COLUMNS, returning: ALL_COLUMNS, rows: [] };
  return enforceReadPolicy((t, op) => (t === root.table ? all : permit(t, op)), root);
}

/** `{ rowFilters }` with the grant's conditions appended, or nothing when there are none. */
function rows(existing: readonly Condition[] | undefined, grant: Grant): { rowFilters?: readonly Condition[] } {
  if (grant.rows.length === 0) return existing === undefined ? {} : { rowFilters: existing };
  return { rowFilters: Object.freeze([...(existing ?? []), ...grant.rows]) };
}

/**
 * A write body must itself meet the row conditions: every row names each condition's column with
 * exactly its value (a missing column could be filled by a database default the gateway cannot
 * see, so it is refused too). PATCH checks only the conditions on columns it changes; its row
 * must meet all of them already, through the row filter of its WHERE.
 */
function checkInsertedRows(table: Table, grant: Grant, body: readonly BodyRow[], batch: boolean): void {
  if (grant.rows.length === 0) return;
  for (const [i, row] of body.entries()) {
    for (const condition of grant.rows) {
      const { column } = condition.field;
      const value = Object.hasOwn(row, column.name) ? row[column.name] : undefined;
      if (value !== undefined && scalarText(value) === condition.value) continue;
      throw forbidden(`The policy only lets you write rows of \`${table.name}\` whose \`${column.name}\` is yours; send it with that value.`, {
        table: table.name,
        column: column.name,
        ...(batch ? { row: i } : {}),
      });
    }
  }
}

/**
 * A JSON string's value, or a JSON number as JavaScript prints it (`1.0` and `1e0` are `1`, the
 * comparison the policy has always made); undefined for any other JSON value, which never meets a
 * row condition.
 */
function scalarText(json: string): string | undefined {
  if (json.startsWith('"')) return JSON.parse(json) as string;
  if (/^-?\d/.test(json)) return String(Number(json));
  return undefined;
}

/** The names a page's grammar gives its projection and ordering (`select`, `sort`); a tree read's are `select`, `order`. */
const pageChecks: RootChecks = Object.freeze({ select: '`select`', order: '`sort`', tieBreakers: 0, columnsRequired: true });
const treeChecks: RootChecks = Object.freeze({ select: 'select', order: 'order', tieBreakers: 0, columnsRequired: false });

/** The checks of one request against one policy. */
class Gate {
  constructor(private readonly permit: Permit) {}

  /**
   * One path for every read: its levels as enforce-read-policy.ts checks them, then each capability
   * it has (an aggregate's or distinct column, the key, a keyset cursor, the parent row, the search).
   */
  read(command: ReadCommand): ReadCommand {
    const { table } = command;
    const grant = this.permit(table, 'read');
    const page = command.media === 'page';
    if (command.aggregate?.column) this.readable(table, grant, [command.aggregate.column], '`column`');
    if (command.distinct) this.readable(table, grant, [command.distinct], '`distinct`');
    const root = enforceReadPolicy(this.permit, command.root, new Map(), page ? { ...pageChecks, tieBreakers: command.tieBreakers ?? 0, grant } : { ...treeChecks, grant });
    if (command.key) this.readable(table, grant, command.key.map((k) => k.column), 'the key');
    // The ordering's tie-breaker (the primary key) is not named by the caller, but a cursor would
    // hand its values out: no cursors over columns the caller may not read.
    const noCursor = command.noCursor === true || (page && root.order.some((k) => k.related === undefined && !allows(grant.read, k.field.column.name)));
    if (noCursor && command.cursor) throw forbidden(`Cursors of \`${table.name}\` would carry columns the policy does not let you read; page with offset.`, { table: table.name, parameter: 'cursor' });
    let { parent } = command;
    if (parent) {
      const parentGrant = this.permit(parent.table, 'read');
      this.readable(parent.table, parentGrant, parent.key.map((k) => k.column), 'the key');
      parent = Object.freeze({ ...parent, ...rows(parent.rowFilters, parentGrant) });
    }
    const search = command.search ? { search: this.search(table, grant, command.search) } : {};
    return { ...command, root, ...(parent ? { parent } : {}), ...search, ...(noCursor ? { noCursor } : {}) };
  }

  /** Named search columns must be readable; the default (every text column) keeps the readable ones. */
  search(table: Table, grant: Grant, search: Search): Search {
    if (search.explicitColumns) {
      this.readable(table, grant, search.columns, '`search_columns`');
      return search;
    }
    const columns = search.columns.filter((c) => allows(grant.read, c.name));
    if (columns.length === 0) throw forbidden(`No text column of \`${table.name}\` that the policy lets you read can be searched.`, { table: table.name });
    return Object.freeze({ ...search, columns: Object.freeze(columns) });
  }

  readable(table: Table, grant: Grant, columns: readonly Column[], where: string): void {
    check(table, grant.read, columns, 'read', where);
  }

  writable(table: Table, grant: Grant, columns: readonly Column[]): void {
    check(table, grant.write, columns, 'write', 'the body');
  }

  /** Returned columns must be readable and returnable; without `returning`, the others are dropped. */
  returning(table: Table, grant: Grant, returning: readonly Column[], explicit: boolean): readonly Column[] {
    if (explicit) {
      this.readable(table, grant, returning, '`returning`');
      check(table, grant.returning, returning, 'return', '`returning`');
      return returning;
    }
    if (grant.read.kind === 'all' && grant.returning.kind === 'all') return returning;
    return Object.freeze(returning.filter((c) => allows(grant.read, c.name) && allows(grant.returning, c.name)));
  }
}

function check(table: Table, set: ColumnSet, columns: readonly Column[], verb: string, where: string): void {
  const denied = columns.find((c) => !allows(set, c.name));
  if (denied) {
    throw forbidden(`The policy does not let you ${verb} \`${table.name}.${denied.name}\` (in ${where}).`, { table: table.name, column: denied.name, in: where.replace(/`/g, '') });
  }
}

export function forbidden(message: string, details: Record<string, unknown>): GatewayError {
  return new GatewayError('FORBIDDEN', message, { details });
}
