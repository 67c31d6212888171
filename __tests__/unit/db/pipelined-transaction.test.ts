import { contextQuery, maxPreparedStatements, PipelinedTransaction } from '../../../lib/db/pipelined-transaction';

type Msg = { name?: string; statement?: string; text?: string; portal?: string; type?: string };

/** Records the protocol messages pg would write, in order. */
function fakeConnection(parsed: Record<string, string> = {}) {
  const messages: string[] = [];
  const record = (kind: string) => (msg?: Msg): void => {
    messages.push(`${kind}${msg?.name ? `:${msg.name}` : msg?.statement ? `:${msg.statement}` : ''}`);
  };
  return {
    messages,
    connection: {
      parsedStatements: parsed,
      stream: { cork: (): void => void messages.push('cork'), uncork: (): void => void messages.push('uncork'), prependListener: () => undefined, removeListener: () => undefined },
      parse: record('parse'),
      close: record('close'),
      bind: record('bind'),
      describe: record('describe'),
      execute: record('execute'),
      sync: record('sync'),
    },
  };
}

const settings = { tenantId: 't', userId: 'u', agentId: '', statementTimeoutMs: 30000, searchPath: '"public"', readOnly: true, prepared: true };
const query = (text = 'SELECT 1') => ({ text, values: [] });
const tx = (s = settings, text?: string, cb: (err: Error | null, rows: unknown) => void = () => undefined) => new PipelinedTransaction(s, query(text), (v) => v, cb);

describe('PipelinedTransaction', () => {
  it('writes context + statement + reset as one corked batch ending in a single Sync (one round trip)', () => {
    const { connection, messages } = fakeConnection();
    tx(settings, 'SELECT batch').submit(connection);
    expect(messages).toEqual([
      'cork',
      'parse:tablegate_context_ro_v2',
      'parse:tablegate_reset_all_v1',
      'parse:tablegate_reset_role_v1',
      'parse:tablegate_discard_temp_v1',
      'parse:tablegate_unlock_v1',
      'bind:tablegate_context_ro_v2',
      'execute',
      expect.stringMatching(/^parse:tablegate_q\d+$/),
      expect.stringMatching(/^bind:tablegate_q\d+$/),
      'describe',
      'execute',
      // After the plan: back to the role's defaults, and no session advisory lock. No DISCARD
      // TEMP after a read: a READ ONLY transaction cannot create a temporary table.
      'bind:tablegate_reset_all_v1',
      'execute',
      'bind:tablegate_reset_role_v1',
      'execute',
      'bind:tablegate_unlock_v1',
      'execute',
      'sync',
      'uncork',
    ]);
  });

  it('sets the context again after the reset of a write, for the deferred triggers that run at COMMIT', () => {
    const { connection, messages } = fakeConnection();
    tx({ ...settings, readOnly: false }, 'UPDATE t SET x = 1').submit(connection);
    const afterPlan = messages.slice(messages.indexOf('describe') + 2);
    expect(afterPlan).toEqual([
      'bind:tablegate_reset_all_v1',
      'execute',
      'bind:tablegate_reset_role_v1',
      'execute',
      'bind:tablegate_discard_temp_v1',
      'execute',
      'bind:tablegate_context_rw_v2',
      'execute',
      'sync',
      'uncork',
    ]);
  });

  it('parses each statement once per connection and reuses it afterwards', () => {
    const probe = tx();
    const { connection, messages } = fakeConnection({ [probe.name]: probe.text });
    tx(settings, 'SELECT reuse').submit(connection);
    tx(settings, 'SELECT reuse').submit(connection);
    expect(messages.filter((m) => m.startsWith('parse'))).toEqual([
      'parse:tablegate_reset_all_v1',
      'parse:tablegate_reset_role_v1',
      'parse:tablegate_discard_temp_v1',
      'parse:tablegate_unlock_v1',
      expect.stringMatching(/^parse:tablegate_q\d+$/),
    ]);
    expect(messages.filter((m) => m.startsWith('bind:tablegate_q'))).toHaveLength(2);
    expect(messages.filter((m) => m.startsWith('bind:tablegate_reset_all_v1'))).toHaveLength(2);
  });

  it('closes and parses the reset statements again after a batch that parsed them failed', () => {
    const { connection, messages } = fakeConnection();
    const failing = tx(settings, 'SELECT first');
    failing.submit(connection);
    failing.handleError(new Error('the batch failed before its Parse messages ran'));
    messages.length = 0;
    tx(settings, 'SELECT second').submit(connection);
    const resetParseAndClose = (m: string): boolean => /tablegate_(reset|discard|unlock)/.test(m) && !m.startsWith('bind');
    expect(messages.filter(resetParseAndClose)).toEqual(
      ['reset_all', 'reset_role', 'discard_temp', 'unlock'].flatMap((n) => [`close:tablegate_${n}_v1`, `parse:tablegate_${n}_v1`]),
    );
    messages.length = 0;
    tx(settings, 'SELECT third').submit(connection);
    expect(messages.filter(resetParseAndClose)).toEqual([]);
  });

  it('binds the search path as the fifth parameter of the context statement, never in its text', () => {
    const searchPath = '"Mixed Case", "a-b", "we""ird", "public"';
    const t = tx({ ...settings, searchPath });
    expect(t.text).toContain("set_config('search_path', $5, true)");
    expect(t.text).not.toContain('Mixed');
    expect(contextQuery({ ...settings, searchPath }).values).toEqual(['t', 'u', '', '30000', searchPath]);
    const bound: unknown[][] = [];
    const { connection } = fakeConnection();
    connection.bind = (msg?: Msg) => void bound.push((msg as { values?: unknown[] } | undefined)?.values ?? []);
    t.submit(connection);
    // The context statement is bound before the plan, and for a write again after the reset.
    expect(bound.filter((v) => v[4] === searchPath)).toHaveLength(1);
    bound.length = 0;
    tx({ ...settings, searchPath, readOnly: false }).submit(connection);
    expect(bound.filter((v) => v[4] === searchPath)).toHaveLength(2);
  });

  it('closes the least recently used statement beyond the bound', () => {
    const { connection, messages } = fakeConnection();
    for (let i = 0; i <= maxPreparedStatements; i++) tx(settings, `SELECT ${i} -- lru`).submit(connection);
    const closes = messages.filter((m) => m.startsWith('close'));
    expect(closes).toHaveLength(1);
    const firstName = messages.find((m) => m.startsWith('parse:tablegate_q'))!.slice('parse:'.length);
    expect(closes[0]).toBe(`close:${firstName}`);
  });

  it('forgets a statement whose batch failed and closes it before the next batch', () => {
    const { connection, messages } = fakeConnection();
    const failing = tx(settings, 'SELECT broken');
    failing.submit(connection);
    failing.handleError(new Error('syntax error'));
    const name = messages.find((m) => m.startsWith('parse:tablegate_q'))!.slice('parse:'.length);
    messages.length = 0;
    tx(settings, 'SELECT broken').submit(connection);
    expect(messages[messages.indexOf('execute') + 1]).toBe(`close:${name}`);
    expect(messages.filter((m) => m.startsWith('parse:tablegate_q'))).toHaveLength(1);
  });

  it('uses only unnamed statements when prepared statements are off', () => {
    const { connection, messages } = fakeConnection();
    const unprepared = tx({ ...settings, prepared: false });
    unprepared.submit(connection);
    expect(unprepared.name).toBe('');
    // Context, plan, RESET ALL, RESET ROLE, unlock: each parsed as the unnamed statement.
    expect(messages.filter((m) => m.startsWith('parse') || m.startsWith('bind'))).toEqual(Array(5).fill(['parse', 'bind']).flat());
  });

  it('sets READ ONLY only for read plans', () => {
    expect(tx().text).toContain('transaction_read_only');
    expect(tx({ ...settings, readOnly: false }).text).not.toContain('transaction_read_only');
  });

  it('keeps only the rows of the second statement and reports once', () => {
    const results: unknown[] = [];
    const t = tx(settings, undefined, (err, rows) => results.push([err, rows]));
    t.handleDataRow({ fields: ['t', 'u'] });
    t.handleCommandComplete();
    t.handleDataRow({ fields: ['{"a":1}'] });
    t.handleCommandComplete();
    // RESET ALL, RESET ROLE, then a statement with a row of its own.
    t.handleCommandComplete();
    t.handleCommandComplete();
    t.handleDataRow({ fields: [''] });
    t.handleCommandComplete();
    t.handleReadyForQuery();
    t.handleError(new Error('late'));
    expect(results).toEqual([[null, { rows: [['{"a":1}']] }]]);
  });
});
