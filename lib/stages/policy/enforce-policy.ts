/**
 * enforcePolicy: the access policy applied to one command, before any SQL exists (contract §6).
 * In: the policy, the caller's identity, the command. Out: the command, narrowed (a default
 * projection, search or `returning` loses the columns the caller may not read), or FORBIDDEN.
 * Never: widens a command.
 *
 * - Operations: list, get, child routes, aggregate and explain are `read`; POST is `create` (an
 *   upsert that updates is also `update`); PATCH is `update`; DELETE is `delete`. Function calls
 *   are governed by the rpc_* keys, not by this policy.
 * - Every table a command reads needs `read`: expanded tables and the parent of a child route too,
 *   so expanding into a denied table is a 403, never a silent null.
 * - A column the caller names (select, filter, sort, distinct, search_columns, aggregate column,
 *   returning) must be readable; a written column writable; a returned column readable and
 *   returnable. Join keys and the primary-key tie-breaker are not named by the caller and stay.
 */
import type { Column, Table } from '../../schema/schema-types';
import type { Command, Expansion, Filter, ListCommand, Search } from '../../command/command';
import { GatewayError } from '../../errors/gateway-error';
import type { Identity } from '../auth/identity';
import { type AccessPolicy, type AccessRule, allows, type ColumnSet, type Operation, ruleFor } from './access-policy';

export function enforcePolicy(policy: AccessPolicy, identity: Identity, command: Command): Command {
  const gate = new Gate(policy, identity);
  switch (command.kind) {
    case 'list':
      return Object.freeze(gate.list(command));
    case 'explain':
      return Object.freeze({ ...command, list: Object.freeze(gate.list(command.list)) });
    case 'get': {
      const rule = gate.permit(command.table, 'read');
      const select = gate.projection(command.table, rule, command.select, command.explicitSelect, 'select');
      gate.readable(command.table, rule, command.key.map((k) => k.column), 'the key');
      return Object.freeze({ ...command, select, expand: gate.expansions(command.expand) });
    }
    case 'aggregate': {
      const rule = gate.permit(command.table, 'read');
      if (command.column) gate.readable(command.table, rule, [command.column], '`column`');
      gate.filters(command.table, rule, command.filters);
      return Object.freeze({ ...command, search: gate.search(command.table, rule, command.search) });
    }
    case 'insert': {
      const rule = gate.permit(command.table, 'create');
      if (command.onConflict?.action === 'update') gate.permit(command.table, 'update');
      gate.writable(command.table, rule, command.columns);
      return Object.freeze({ ...command, returning: gate.returning(command.table, rule, command.returning, command.explicitReturning) });
    }
    case 'update': {
      const rule = gate.permit(command.table, 'update');
      gate.writable(command.table, rule, command.columns);
      return Object.freeze({ ...command, returning: gate.returning(command.table, rule, command.returning, command.explicitReturning) });
    }
    case 'delete': {
      const rule = gate.permit(command.table, 'delete');
      return Object.freeze({ ...command, returning: gate.returning(command.table, rule, command.returning, command.explicitReturning) });
    }
    case 'rpc':
    case 'contracts':
      return command;
  }
}

/** The checks of one request; a rule of `undefined` means "allowed by default_decision = allow". */
class Gate {
  constructor(
    private readonly policy: AccessPolicy,
    private readonly identity: Identity,
  ) {}

  /** The table's rule, after checking the operation, the role and the scopes. */
  permit(table: Table, operation: Operation): AccessRule | undefined {
    const rule = ruleFor(this.policy, table.name);
    if (rule === undefined) {
      if (this.policy.defaultDecision === 'allow') return undefined;
      throw forbidden(`The access policy has no rule for \`${table.name}\` (default_decision = deny).`, { table: table.name, operation });
    }
    if (!rule.operations.has(operation)) {
      throw forbidden(`The access policy does not permit \`${operation}\` on \`${table.name}\`.`, { table: table.name, operation });
    }
    if (rule.anyRole.length > 0 && !rule.anyRole.includes(this.identity.role)) {
      throw forbidden(`\`${operation}\` on \`${table.name}\` needs one of the roles ${rule.anyRole.join(', ')}.`, { table: table.name, operation });
    }
    const missing = rule.scopes.filter((s) => !this.identity.scopes.includes(s));
    if (missing.length > 0) {
      throw forbidden(`\`${operation}\` on \`${table.name}\` needs the scopes ${missing.join(', ')}.`, { table: table.name, operation, missing_scopes: missing });
    }
    return rule;
  }

  list(command: ListCommand): ListCommand {
    const { table } = command;
    const rule = this.permit(table, 'read');
    if (command.distinct) this.readable(table, rule, [command.distinct], '`distinct`');
    const select = this.projection(table, rule, command.select, command.explicitSelect, 'select');
    this.filters(table, rule, command.filters);
    this.readable(table, rule, command.sort.map((k) => k.column), '`sort`');
    if (command.parent) {
      const parentRule = this.permit(command.parent.table, 'read');
      this.readable(command.parent.table, parentRule, command.parent.key.map((k) => k.column), 'the key');
    }
    return { ...command, select, search: this.search(table, rule, command.search), expand: this.expansions(command.expand) };
  }

  filters(table: Table, rule: AccessRule | undefined, filters: readonly Filter[]): void {
    this.readable(table, rule, filters.map((f) => f.column), 'a filter');
  }

  /** Named search columns must be readable; the default (every text column) keeps the readable ones. */
  search(table: Table, rule: AccessRule | undefined, search: Search | null): Search | null {
    if (search === null) return null;
    if (search.explicitColumns) {
      this.readable(table, rule, search.columns, '`search_columns`');
      return search;
    }
    const columns = search.columns.filter((c) => rule === undefined || allows(rule.read, c.name));
    if (columns.length === 0) throw forbidden(`No text column of \`${table.name}\` that the access policy lets you read can be searched.`, { table: table.name });
    return Object.freeze({ ...search, columns: Object.freeze(columns) });
  }

  /** Named columns must be readable; a default projection keeps the readable ones. */
  projection(table: Table, rule: AccessRule | undefined, select: readonly Column[], explicit: boolean, where: string): readonly Column[] {
    if (explicit) {
      this.readable(table, rule, select, `\`${where}\``);
      return select;
    }
    if (rule === undefined) return select;
    const kept = select.filter((c) => allows(rule.read, c.name));
    if (kept.length === 0) throw forbidden(`The access policy lets you read no column of \`${table.name}\`.`, { table: table.name });
    return Object.freeze(kept);
  }

  expansions(expansions: readonly Expansion[]): readonly Expansion[] {
    return Object.freeze(
      expansions.map((e) => {
        const target = e.relation.target;
        const rule = this.permit(target, 'read');
        return Object.freeze({ ...e, select: this.projection(target, rule, e.select, false, 'expand') });
      }),
    );
  }

  readable(table: Table, rule: AccessRule | undefined, columns: readonly Column[], where: string): void {
    this.check(table, rule?.read, columns, 'read', where);
  }

  writable(table: Table, rule: AccessRule | undefined, columns: readonly Column[]): void {
    this.check(table, rule?.write, columns, 'write', 'the body');
  }

  /** Returned columns must be readable and returnable; without `returning`, the others are dropped. */
  returning(table: Table, rule: AccessRule | undefined, returning: readonly Column[], explicit: boolean): readonly Column[] {
    if (rule === undefined) return returning;
    if (explicit) {
      this.readable(table, rule, returning, '`returning`');
      this.check(table, rule.returning, returning, 'return', '`returning`');
      return returning;
    }
    return Object.freeze(returning.filter((c) => allows(rule.read, c.name) && allows(rule.returning, c.name)));
  }

  private check(table: Table, set: ColumnSet | undefined, columns: readonly Column[], verb: string, where: string): void {
    if (set === undefined) return;
    const denied = columns.find((c) => !allows(set, c.name));
    if (denied) {
      throw forbidden(`The access policy does not let you ${verb} \`${table.name}.${denied.name}\` (in ${where}).`, { table: table.name, column: denied.name, in: where.replace(/`/g, '') });
    }
  }
}

function forbidden(message: string, details: Record<string, unknown>): GatewayError {
  return new GatewayError('FORBIDDEN', message, { details });
}
