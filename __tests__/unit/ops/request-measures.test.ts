/**
 * Per-request measures: the Database port timed without changing what it does, the auth stage
 * timed by runPipeline with its failure reason, and the Server-Timing value made from them.
 */
import { GatewayError } from '../../../lib/errors/gateway-error';
import { serverTiming } from '../../../lib/http/server-timing';
import type { Database } from '../../../lib/pipeline/database';
import { measuredDatabase, newRequestMeasures } from '../../../lib/pipeline/request-measures';
import { runPipeline } from '../../../lib/pipeline/run-pipeline';
import type { GatewayContext, Stages } from '../../../lib/pipeline/stage-types';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const identity = { tenantId: 't', userId: 'u', role: '', agentId: '', scopes: [], claims: {}, source: 'jwt' } as const;

describe('measuredDatabase', () => {
  it('adds the time of each call, failures included, and passes calls and answers through', async () => {
    const seen: unknown[] = [];
    const db: Database = {
      run: async (who, plan) => (seen.push(who, plan), await sleep(30), { rows: [['1']] }),
      locateFailingRow: async () => {
        await sleep(20);
        throw new Error('probe failed');
      },
    };
    const measures = newRequestMeasures();
    const timed = measuredDatabase(db, measures);
    const plan = { query: { text: 'SELECT 1', values: [] } } as never;
    expect(await timed.run(identity, plan)).toEqual({ rows: [['1']] });
    expect(seen).toEqual([identity, plan]);
    await expect(timed.locateFailingRow(identity, {} as never, () => true)).rejects.toThrow('probe failed');
    expect(measures.dbCalls).toBe(2);
    expect(measures.dbMs).toBeGreaterThanOrEqual(45);
    expect(measures.dbMs).toBeLessThan(1000);
  });

  it('keeps every method of the port: an export streams through it, and a Database without stream stays without', async () => {
    const stream = { batch: 'first' } as never;
    const db: Database = { run: async () => ({ rows: [] }), locateFailingRow: async () => undefined, stream: async () => (await sleep(10), stream) };
    const measures = newRequestMeasures();
    const timed = measuredDatabase(db, measures);
    expect(await timed.stream!(identity, {} as never)).toBe(stream);
    expect(measures.dbCalls).toBe(1);
    expect('stream' in measuredDatabase({ run: db.run, locateFailingRow: db.locateFailingRow }, measures)).toBe(false);
  });
});

describe('runPipeline measures', () => {
  const stages = (auth: Stages['auth']): Stages => ({
    auth,
    parse: () => ({ kind: 'contracts', functions: [] }),
    policy: (ctx) => ctx.command,
    allowList: (ctx) => ctx.command,
    compile: () => ({ query: null, readOnly: true, shape: { kind: 'value', value: 0 } }) as never,
    execute: () => ({ rows: [] }),
  });

  it('records the auth stage time', async () => {
    const ctx = { measures: newRequestMeasures() } as unknown as GatewayContext;
    await runPipeline(stages(async () => (await sleep(25), identity)), ctx);
    expect(ctx.measures!.authMs).toBeGreaterThanOrEqual(20);
    expect(ctx.measures!.authFailure).toBeUndefined();
  });

  it('records why auth failed, and rethrows the same error', async () => {
    const ctx = { measures: newRequestMeasures() } as unknown as GatewayContext;
    const refusal = new GatewayError('UNAUTHORIZED', 'no', { reason: 'wrong_audience' });
    await expect(runPipeline(stages(() => { throw refusal; }), ctx)).rejects.toBe(refusal);
    expect(ctx.measures!.authFailure).toBe('wrong_audience');
    const other = { measures: newRequestMeasures() } as unknown as GatewayContext;
    await expect(runPipeline(stages(() => { throw new Error('host bug'); }), other)).rejects.toThrow('host bug');
    expect(other.measures!.authFailure).toBe('other');
  });

  it('works without measures (a host calling runPipeline itself)', async () => {
    await expect(runPipeline(stages(() => identity), {} as GatewayContext)).resolves.toEqual({ rows: [] });
  });
});

describe('serverTiming', () => {
  it('names auth, db and total in milliseconds', () => {
    expect(serverTiming({ authMs: 0.4321, dbMs: 2.06, dbCalls: 1 }, 3)).toBe('auth;dur=0.4, db;dur=2.1, total;dur=3.0');
    expect(serverTiming(newRequestMeasures(), 0.04)).toBe('auth;dur=0.0, db;dur=0.0, total;dur=0.0');
  });
});
