/**
 * The tenant context on Citus (docs/citus.md, "The tenant on every node"): Citus forwards no
 * `set_config()` call to its workers, so row-level security evaluated on a worker would see no
 * tenant. It forwards `SET LOCAL` of a setting, inside a transaction block, once
 * `citus.propagate_set_commands` is `local` (Citus source, commands/variableset.c and
 * transaction/transaction_management.c: to the worker connections already in the transaction and
 * at the start of every later one). So on Citus the request's transaction is an explicit block
 * and, after the usual context statement, these statements set the `app.*` and `request.*`
 * settings once more, by SET LOCAL.
 * In: the caller's settings. Out: statement texts. Never: used when Citus is not in the database
 * (the single-node batch is unchanged), or given a value it cannot quote.
 *
 * SET takes no bound parameters, so each value is written as a string constant, quoted here and
 * nowhere else: single quotes doubled, and a value with a backslash written as an escape string
 * (E'...') with its backslashes doubled, so it reads the same whatever standard_conforming_strings
 * is (PostgreSQL docs §4.1.2.1-2; libpq's PQescapeLiteral does the same). A NUL cannot be in a
 * string constant: auth refuses such claims before they get here, and this throws if one does.
 */
import type { RequestSettings } from '../pipeline/database';

/** What the SET LOCAL statements carry: the tenant context and a door's request settings. */
export interface DistributedSettings {
  readonly tenantId: string;
  readonly userId: string;
  readonly agentId: string;
  readonly request?: RequestSettings;
}

/** First: from here to the end of the transaction, SET LOCAL reaches the workers. */
export const propagateSetCommands = "SET LOCAL citus.propagate_set_commands = 'local'";

/** The SET LOCAL statements after the context statement, in order (the first is propagateSetCommands). */
export function distributedContextStatements(settings: DistributedSettings): string[] {
  const pairs: [string, string][] = [
    ['app.current_tenant_id', settings.tenantId],
    ['app.current_user_id', settings.userId],
    ['app.current_agent_id', settings.agentId],
    ['app.is_super_admin', 'false'],
  ];
  if (settings.request) {
    pairs.push(['request.jwt.claims', settings.request.claims], ['request.method', settings.request.method], ['request.path', settings.request.path], ['request.headers', settings.request.headers]);
    // The workers render the rows of a router query: they need the request's time zone too.
    if (settings.request.timeZone) pairs.push(['timezone', settings.request.timeZone]);
  }
  // The names are this module's constants, each a valid two-part custom setting name.
  return [propagateSetCommands, ...pairs.map(([name, value]) => `SET LOCAL ${name} = ${quoteLiteral(value)}`)];
}

/** A string constant that PostgreSQL reads back as exactly `value`. */
export function quoteLiteral(value: string): string {
  if (value.includes('\0')) throw new Error('a setting value with a NUL character cannot be sent');
  const quoted = `'${value.replace(/'/g, "''")}'`;
  return value.includes('\\') ? `E${quoted.replace(/\\/g, '\\\\')}` : quoted;
}
