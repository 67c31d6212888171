/**
 * Whether this gateway sends named prepared statements (`prepared_statements`), and the one way
 * that can change at run time: a pooler between the gateway and PostgreSQL that does not keep a
 * connection's prepared statements from one transaction to the next (PgBouncer in transaction
 * mode before 1.21, or later without `max_prepared_statements`). Then the gateway switches to
 * unnamed statements for good, with one warning that names the fix (docs/scaling-out.md).
 *
 * In: the configured value and how to set it off. Out: `enabled`, read once per request.
 * Never: switches back on, or warns more than once.
 */
import createDebug from 'debug';

const debug = createDebug('tablegate:db');

export class NamedStatements {
  private on: boolean;

  /** `turnOff` says how to set prepared statements off, in the caller's spelling (howToSet). */
  constructor(enabled: boolean, private readonly turnOff: string) {
    this.on = enabled;
  }

  get enabled(): boolean {
    return this.on;
  }

  /** Switch to unnamed statements (idempotent); the first call warns with what showed it and the fix. */
  disable(finding: string): void {
    if (!this.on) return;
    this.on = false;
    debug('named prepared statements off: %s', finding);
    console.warn(
      `tablegate: WARNING: named prepared statements do not last from one transaction to the next on this database's connections (${finding}), ` +
        'as behind PgBouncer in transaction mode before 1.21. The gateway now sends unnamed statements, which PostgreSQL parses and plans ' +
        `on every request. Set ${this.turnOff} to say so and silence this warning, or let the pooler keep prepared statements ` +
        '(PgBouncer 1.21 or later: max_prepared_statements > 0); see docs/scaling-out.md.',
    );
  }
}

/**
 * The errors a transaction-mode pooler causes for the gateway's own named statements: the
 * statement was prepared on another server connection (26000 `invalid_sql_statement_name`,
 * "prepared statement ... does not exist"), or another client already prepared that name on this
 * one (42P05 `duplicate_prepared_statement`, "... already exists"). Both stop the batch at a
 * Parse or Bind, before the request's own statement runs, so the batch may simply be sent again.
 */
export function isLostStatementError(err: unknown): boolean {
  const { code, message } = (err ?? {}) as { code?: unknown; message?: unknown };
  return (code === '26000' || code === '42P05') && typeof message === 'string' && /prepared statement "tablegate_/.test(message);
}
