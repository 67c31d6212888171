import { maxPreparedStatements, PipelinedTransaction } from '../../../lib/db/pipelined-transaction';

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

const settings = { tenantId: 't', userId: 'u', agentId: '', statementTimeoutMs: 30000, readOnly: true, prepared: true };
const query = (text = 'SELECT 1') => ({ text, values: [] });
const tx = (s = settings, text?: string, cb: (err: Error | null, rows: unknown) => void = () => undefined) => new PipelinedTransaction(s, query(text), (v) => v, cb);

describe('PipelinedTransaction', () => {
  it('writes context + statement as one corked batch ending in a single Sync (one round trip)', () => {
    const { connection, messages } = fakeConnection();
    tx(settings, 'SELECT batch').submit(connection);
    expect(messages).toEqual([
      'cork',
      'parse:tablegate_context_ro_v1',
      'bind:tablegate_context_ro_v1',
      'execute',
      expect.stringMatching(/^parse:tablegate_q\d+$/),
      expect.stringMatching(/^bind:tablegate_q\d+$/),
      'describe',
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
    expect(messages.filter((m) => m.startsWith('parse'))).toHaveLength(1);
    expect(messages.filter((m) => m.startsWith('bind:tablegate_q'))).toHaveLength(2);
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
    expect(messages.filter((m) => m.startsWith('parse') || m.startsWith('bind'))).toEqual(['parse', 'bind', 'parse', 'bind']);
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
    t.handleReadyForQuery();
    t.handleError(new Error('late'));
    expect(results).toEqual([[null, { rows: [['{"a":1}']] }]]);
  });
});
