import { PipelinedTransaction } from '../../../lib/db/pipelined-transaction';

/** Records the protocol messages pg would write, in order. */
function fakeConnection(parsed: Record<string, string> = {}) {
  const messages: string[] = [];
  const record = (kind: string) => (msg?: { name?: string; statement?: string; text?: string; portal?: string }): void => {
    messages.push(`${kind}${msg?.name ? `:${msg.name}` : msg?.statement ? `:${msg.statement}` : ''}`);
  };
  return {
    messages,
    connection: {
      parsedStatements: parsed,
      stream: { cork: (): void => void messages.push('cork'), uncork: (): void => void messages.push('uncork') },
      parse: record('parse'),
      bind: record('bind'),
      describe: record('describe'),
      execute: record('execute'),
      sync: record('sync'),
    },
  };
}

const settings = { tenantId: 't', userId: 'u', agentId: '', statementTimeoutMs: 30000, readOnly: true };
const query = { text: 'SELECT 1', values: [] };

describe('PipelinedTransaction', () => {
  it('writes context + statement as one corked batch ending in a single Sync (one round trip)', () => {
    const { connection, messages } = fakeConnection();
    new PipelinedTransaction(settings, query, (v) => v, () => undefined).submit(connection);
    expect(messages).toEqual([
      'cork',
      'parse:tablegate_context_ro_v1',
      'bind:tablegate_context_ro_v1',
      'execute',
      'parse',
      'bind',
      'describe',
      'execute',
      'sync',
      'uncork',
    ]);
  });

  it('skips parsing the context statement once the connection has it', () => {
    const probe = new PipelinedTransaction(settings, query, (v) => v, () => undefined);
    const { connection, messages } = fakeConnection({ [probe.name]: probe.text });
    probe.submit(connection);
    expect(messages.filter((m) => m.startsWith('parse'))).toEqual(['parse']);
  });

  it('sets READ ONLY only for read plans', () => {
    expect(new PipelinedTransaction(settings, query, (v) => v, () => undefined).text).toContain('transaction_read_only');
    expect(new PipelinedTransaction({ ...settings, readOnly: false }, query, (v) => v, () => undefined).text).not.toContain('transaction_read_only');
  });

  it('keeps only the rows of the second statement and reports once', () => {
    const results: unknown[] = [];
    const tx = new PipelinedTransaction(settings, query, (v) => v, (err, rows) => results.push([err, rows]));
    tx.handleDataRow({ fields: ['t', 'u'] });
    tx.handleCommandComplete();
    tx.handleDataRow({ fields: ['{"a":1}'] });
    tx.handleCommandComplete();
    tx.handleReadyForQuery();
    tx.handleError(new Error('late'));
    expect(results).toEqual([[null, [['{"a":1}']]]]);
  });
});
