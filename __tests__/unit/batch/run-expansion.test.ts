/**
 * runExpansion without a database: every operation passes parse, policy and allow-list before the
 * transaction opens (a refusal opens none), a batch of reads asks for a READ ONLY transaction, a
 * failure names its operation, and only a 404 from an answer is skipped when the expansion says so.
 */
import { GatewayError } from '../../../lib/errors/gateway-error';
import { runExpansion } from '../../../lib/run-expansion';
import type { Database, TransactionOptions } from '../../../lib/pipeline/database';
import type { Expansion, OperationAnswer } from '../../../lib/pipeline/door';
import type { GatewayRequest } from '../../../lib/pipeline/gateway-request';
import type { Stages } from '../../../lib/pipeline/stage-types';
import type { Command } from '../../../lib/command/command';
import { anonymousIdentity } from '../../../lib/pipeline/identity';
import { testConfig } from '../auth/config-fixture';

const req = (method: string): GatewayRequest => ({ id: 'r', method, segments: ['t'], rawSegments: ['t'], query: [], headers: {}, body: undefined, loopback: true });

function harness(methods: string[], options: { refuse?: number; failAt?: number; notFoundAt?: number; skips?: boolean } = {}) {
  const log: string[] = [];
  const transactions: TransactionOptions[] = [];
  const inner: Database = { run: async () => ({ rows: [] }), locateFailingRow: async () => undefined };
  const db: Database = {
    ...inner,
    async transaction(_identity, opts, work) {
      transactions.push(opts);
      log.push('BEGIN');
      const value = await work(inner);
      log.push('COMMIT');
      return value;
    },
  };
  let n = 0;
  const kindOf = (m: string) => (m === 'GET' ? 'read' : 'insert') as Command['kind'];
  const stages: Stages = {
    auth: () => anonymousIdentity,
    parse: (ctx) => ({ kind: kindOf(ctx.request.method), n: n++ }) as unknown as Command,
    policy: (ctx) => {
      const i = (ctx.command as unknown as { n: number }).n;
      if (options.refuse !== undefined && i === options.refuse) throw new GatewayError('FORBIDDEN', 'no');
      log.push(`policy ${ctx.request.method}`);
      return ctx.command;
    },
    allowList: (ctx) => ctx.command,
    compile: () => ({ query: { text: 'x', values: [] }, readOnly: true, shape: { kind: 'written', data: 0, count: 1 } }),
    execute: async () => {
      log.push('execute');
      return { rows: [] };
    },
  };
  let ran = 0;
  const render = (): OperationAnswer => {
    const i = ran++;
    if (i === options.failAt) throw new GatewayError('CONFLICT', 'dup');
    if (i === options.notFoundAt) throw new GatewayError('NOT_FOUND', 'gone');
    return { status: 200, body: `{"data":${i}}` };
  };
  const expansion: Expansion = {
    operations: methods.map((m, i) => ({ where: { operation: i }, checked: req(m), request: () => req(m) })),
    skipsNotFound: options.skips === true,
    answer: (answers) => ({ status: 200, body: JSON.stringify(answers) }),
  };
  const ctx = { request: req('POST'), config: testConfig(), schema: {} as never, db, identity: anonymousIdentity };
  return { run: () => runExpansion(ctx, expansion, { stages, render }), log, transactions };
}

describe('runExpansion', () => {
  it('checks every operation before the transaction opens, then runs each in it', async () => {
    const h = harness(['POST', 'GET']);
    await h.run();
    expect(h.log).toEqual(['policy POST', 'policy GET', 'BEGIN', 'policy POST', 'execute', 'policy GET', 'execute', 'COMMIT']);
    expect(h.transactions).toEqual([{ readOnly: false, statements: 2 }]);
  });

  it('opens no transaction when the policy refuses any operation, and names it', async () => {
    const h = harness(['POST', 'POST', 'GET'], { refuse: 1 });
    await expect(h.run()).rejects.toMatchObject({ code: 'FORBIDDEN', details: { operation: 1 } });
    expect(h.transactions).toEqual([]);
    expect(h.log).not.toContain('execute');
  });

  it('runs a batch of reads READ ONLY', async () => {
    const h = harness(['GET', 'GET']);
    await h.run();
    expect(h.transactions).toEqual([{ readOnly: true, statements: 2 }]);
  });

  it('fails the whole transaction at the first failing operation, naming it, and commits nothing', async () => {
    const h = harness(['POST', 'POST', 'POST'], { failAt: 1 });
    await expect(h.run()).rejects.toMatchObject({ code: 'CONFLICT', details: { operation: 1 } });
    expect(h.log).not.toContain('COMMIT');
  });

  it('skips a 404 answer only when the expansion skips missing rows', async () => {
    await expect(harness(['POST', 'POST'], { notFoundAt: 0 }).run()).rejects.toMatchObject({ code: 'NOT_FOUND', details: { operation: 0 } });
    await expect(harness(['POST', 'POST'], { notFoundAt: 0, skips: true }).run()).resolves.toEqual({ status: 200, body: '[null,{"status":200,"body":"{\\"data\\":1}"}]' });
  });
});
