import { applyStageOverrides, runPipeline } from '../../../lib/pipeline/run-pipeline';
import type { GatewayContext, Stages } from '../../../lib/pipeline/stage-types';

const calls: string[] = [];
const defaults: Stages = {
  auth: () => (calls.push('auth'), { tenantId: 't', userId: 'u', role: '', agentId: '', scopes: [], claims: {}, source: 'jwt' }),
  parse: () => (calls.push('parse'), { kind: 'get' } as never),
  policy: (ctx) => (calls.push('policy'), ctx.command),
  allowList: (ctx) => (calls.push('allowList'), ctx.command),
  compile: () => (calls.push('compile'), { query: { text: 'SELECT 1', values: [] }, readOnly: true, shape: { kind: 'value', value: 0 } }),
  execute: () => (calls.push('execute'), { rows: [['1']] }),
};

describe('runPipeline', () => {
  beforeEach(() => calls.splice(0));

  it('runs the six stages in order and stores each value on the context', async () => {
    const ctx = { request: {}, config: {}, schema: {}, db: {} } as unknown as GatewayContext;
    const result = await runPipeline(defaults, ctx);
    expect(calls).toEqual(['auth', 'parse', 'policy', 'allowList', 'compile', 'execute']);
    expect(result).toEqual({ rows: [['1']] });
    expect(ctx).toMatchObject({ identity: { tenantId: 't' }, command: { kind: 'get' }, plan: { readOnly: true }, result });
  });

  it('stops at the first stage that throws', async () => {
    const stages = applyStageOverrides(defaults, { policy: () => { throw new Error('denied'); } });
    await expect(runPipeline(stages, {} as GatewayContext)).rejects.toThrow('denied');
    expect(calls).toEqual(['auth', 'parse']);
  });

  it('runs admit (the rate limit) after parse and before policy, with the caller and the command', async () => {
    const seen: unknown[] = [];
    await runPipeline(defaults, {} as GatewayContext, async (ctx) => {
      calls.push('admit');
      seen.push(ctx.identity.userId, ctx.command.kind);
    });
    expect(calls).toEqual(['auth', 'parse', 'admit', 'policy', 'allowList', 'compile', 'execute']);
    expect(seen).toEqual(['u', 'get']);
  });

  it('stops when admit refuses the request', async () => {
    await expect(runPipeline(defaults, {} as GatewayContext, () => Promise.reject(new Error('limited')))).rejects.toThrow('limited');
    expect(calls).toEqual(['auth', 'parse']);
  });

  it('passes the default stage to a replacement so it can wrap it', async () => {
    const stages = applyStageOverrides(defaults, { compile: (ctx, next) => ({ ...(next(ctx) as object), readOnly: false }) as never });
    const ctx = {} as GatewayContext;
    await runPipeline(stages, ctx);
    expect(ctx.plan?.readOnly).toBe(false);
    expect(calls).toContain('compile');
  });
});
