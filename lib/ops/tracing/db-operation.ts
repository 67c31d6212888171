/**
 * The OpenTelemetry database semantic conventions of one command (docs/observability.md,
 * "Spans"): the SQL operation tablegate runs for it and the table or function it names. Never the
 * statement text or its parameters: they carry the caller's data.
 */
import type { Command } from '../../command/command';

export interface DbOperation {
  /** `db.operation.name`: the statement's SQL keyword. */
  readonly operation: string;
  /** `db.collection.name`: the table, unqualified as the conventions ask (the schema is `db.namespace`). */
  readonly collection?: string;
  /** `db.stored_procedure.name`: the function a call runs. */
  readonly procedure?: string;
  readonly namespace?: string;
}

export function dbOperationOf(command: Command): DbOperation {
  switch (command.kind) {
    case 'read':
      // The default grammar's `_explain` has always been traced as EXPLAIN; a `plan` media read as SELECT.
      return { operation: command.media === 'page' && command.plan ? 'EXPLAIN' : 'SELECT', collection: command.table.name, namespace: command.table.schema };
    case 'insert':
      return { operation: 'INSERT', collection: command.table.name, namespace: command.table.schema };
    case 'update':
      return { operation: 'UPDATE', collection: command.table.name, namespace: command.table.schema };
    case 'delete':
      return { operation: 'DELETE', collection: command.table.name, namespace: command.table.schema };
    case 'rpc':
      return { operation: 'SELECT', procedure: command.fn.name, namespace: command.fn.schema };
    case 'contracts':
      return { operation: 'SELECT' };
  }
}

/** The span name the conventions give: `{db.operation.name} {target}`. */
export function dbSpanName(op: DbOperation): string {
  const target = op.collection ?? op.procedure;
  return target === undefined ? op.operation : `${op.operation} ${target}`;
}
