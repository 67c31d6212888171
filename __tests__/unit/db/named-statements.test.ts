/**
 * The switch from named to unnamed statements behind a pooler that loses them, the errors that
 * trigger it, and plan statement names that differ between processes (docs/scaling-out.md).
 * Against a real PgBouncer: __tests__/integration/pgbouncer.test.ts.
 */
import { isLostStatementError, NamedStatements } from '../../../lib/db/named-statements';

const pgError = (code: string, message: string) => Object.assign(new Error(message), { code });

describe('isLostStatementError', () => {
  it.each([
    ['26000', 'prepared statement "tablegate_context_ro_v1" does not exist'],
    ['26000', 'prepared statement "tablegate_q123456789" does not exist'],
    ['42P05', 'prepared statement "tablegate_context_rw_v1" already exists'],
    ['42P05', 'prepared statement "tablegate_q42" already exists'],
  ])('%s %s: a statement a pooler lost', (code, message) => {
    expect(isLostStatementError(pgError(code, message))).toBe(true);
  });

  it.each([
    ['26000', 'prepared statement "my_own" does not exist'], // a function's EXECUTE of a statement of its own
    ['42P05', 'prepared statement "other_app" already exists'],
    ['42P01', 'relation "tablegate_q1" does not exist'],
    ['08P01', 'bind message supplies 2 parameters, but prepared statement "tablegate_q1" requires 3'],
  ])('%s %s: not one', (code, message) => {
    expect(isLostStatementError(pgError(code, message))).toBe(false);
  });

  it('is false for anything that is not a database error', () => {
    for (const value of [undefined, null, 'prepared statement "tablegate_q1" does not exist', new Error('prepared statement "tablegate_q1" does not exist')]) {
      expect(isLostStatementError(value)).toBe(false);
    }
  });
});

describe('NamedStatements', () => {
  let warn: jest.SpyInstance;
  beforeEach(() => {
    warn = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
  });
  afterEach(() => warn.mockRestore());

  it('goes off once, for good, with one warning that says what showed it and the fix', () => {
    const statements = new NamedStatements(true, '`prepared_statements = false` in [gateway] of gw.toml');
    expect(statements.enabled).toBe(true);
    statements.disable('first finding');
    statements.disable('second finding');
    expect(statements.enabled).toBe(false);
    expect(warn).toHaveBeenCalledTimes(1);
    const message = String(warn.mock.calls[0]![0]);
    expect(message).toMatch(/^tablegate: WARNING: named prepared statements do not last from one transaction to the next .*\(first finding\)/);
    expect(message).toContain('Set `prepared_statements = false` in [gateway] of gw.toml to say so');
    expect(message).toContain('max_prepared_statements');
    expect(message).toContain('docs/scaling-out.md');
  });

  it('never warns when prepared statements are configured off', () => {
    const statements = new NamedStatements(false, 'x');
    statements.disable('finding');
    expect(statements.enabled).toBe(false);
    expect(warn).not.toHaveBeenCalled();
  });
});

describe('plan statement names', () => {
  /** The name of the first plan statement a fresh copy of the module (a new process) parses. */
  function firstName(): string {
    let name = '';
    jest.isolateModules(() => {
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- a fresh module instance
      const { PipelinedTransaction } = require('../../../lib/db/pipelined-transaction') as typeof import('../../../lib/db/pipelined-transaction');
      const tx = new PipelinedTransaction({ tenantId: 't', userId: 'u', agentId: '', statementTimeoutMs: 1, searchPath: '"public"', readOnly: true, prepared: true }, { text: 'SELECT 1', values: [] }, (v) => v, () => undefined);
      const record = (msg: { name?: string }): void => {
        if (msg.name?.startsWith('tablegate_q')) name = msg.name;
      };
      const noop = (): void => undefined;
      tx.submit({ parsedStatements: {}, stream: { prependListener: noop, removeListener: noop } as never, parse: record, close: noop, bind: noop, describe: noop, execute: noop, sync: noop });
    });
    return name;
  }

  it('differ between processes, so two gateways behind one pooler never share a name', () => {
    const names = new Set([firstName(), firstName(), firstName()]);
    expect(names.size).toBe(3);
    for (const name of names) expect(name).toMatch(/^tablegate_q\d+$/);
  });
});
