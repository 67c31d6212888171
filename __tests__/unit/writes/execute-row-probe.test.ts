/**
 * execute: a batch PostgreSQL rejects because of one row is probed to name that row; other
 * failures are reported as they are, without probing. The Database here is a stand-in for the
 * stage's interface (the probing itself runs against PostgreSQL in writes-insert.test.ts).
 */
import type { RowProbe } from '../../../lib/pipeline/plan';
import { GatewayError } from '../../../lib/errors/gateway-error';
import { createCompileStage } from '../../../lib/stages/compile/create-compile-stage';
import { isRowError } from '../../../lib/errors/sqlstate-meaning';
import { createExecuteStage } from '../../../lib/stages/execute/create-execute-stage';
import type { Database } from '../../../lib/pipeline/database';
import { parseInsert } from '../../../lib/doors/rest/parse/parse-insert';
import type { ExecuteContext } from '../../../lib/pipeline/stage-types';
import { testConfig } from '../auth/config-fixture';
import { items, writeRequest } from './write-fixture';

const config = testConfig();
const pgError = (code: string, extra: Record<string, string> = {}) => Object.assign(new Error('new row for relation "items" violates check constraint "qty_check"'), { code, ...extra });

function contextFor(body: string, db: Database): ExecuteContext {
  const command = parseInsert(items, writeRequest('POST', body), config);
  const base = { request: {} as never, config, schema: {} as never, db, identity: {} as never, command };
  return { ...base, plan: createCompileStage()(base) as never };
}

async function failure(ctx: ExecuteContext): Promise<GatewayError> {
  const err = await Promise.resolve(createExecuteStage()(ctx)).then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(GatewayError);
  return err as GatewayError;
}

describe('execute: naming the failing row of a batch', () => {
  it('compile gives batches of two or more rows a prefix probe, and single rows none', () => {
    const db = {} as Database;
    const probe = contextFor('[{"sku":"a"},{"sku":"b"},{"sku":"c"}]', db).plan.rowProbe!;
    expect(probe.rows).toBe(3);
    const q = probe.query(2);
    expect(q.text).toContain('WHERE _a.n <= $2::bigint');
    expect(q.values).toEqual(['[{"sku":"a"},{"sku":"b"},{"sku":"c"}]', 2]);
    expect(contextFor('{"sku":"a"}', db).plan.rowProbe).toBeUndefined();
    expect(contextFor('[{"sku":"a"}]', db).plan.rowProbe).toBeUndefined();
  });

  it('adds details.row and the row to the message when the probe finds it', async () => {
    const probed: RowProbe[] = [];
    const db: Database = {
      run: () => Promise.reject(pgError('23514', { constraint: 'qty_check' })),
      locateFailingRow: (_identity, probe) => {
        probed.push(probe);
        return Promise.resolve({ index: 1, error: pgError('23514', { constraint: 'qty_check' }) });
      },
    };
    const err = await failure(contextFor('[{"sku":"a"},{"sku":"b"}]', db));
    expect(probed).toHaveLength(1);
    expect(err.toJSON()).toMatchObject({ code: 'VALIDATION_ERROR', details: { sqlstate: '23514', constraint: 'qty_check', row: 1 } });
    expect(err.message).toMatch(/^Row 1 of the batch: New row/);
  });

  it('reports the batch error unchanged when the probe cannot tell', async () => {
    const db: Database = { run: () => Promise.reject(pgError('23505')), locateFailingRow: () => Promise.resolve(undefined) };
    const err = await failure(contextFor('[{"sku":"a"},{"sku":"b"}]', db));
    expect(err.toJSON()).toEqual({ code: 'CONFLICT', message: expect.not.stringMatching(/^Row/), details: { sqlstate: '23505' } });
  });

  it('does not probe errors that are not a row\'s fault (timeout), nor single-row inserts', async () => {
    const locate = jest.fn();
    const db: Database = { run: () => Promise.reject(pgError('57014')), locateFailingRow: locate };
    expect((await failure(contextFor('[{"sku":"a"},{"sku":"b"}]', db))).code).toBe('TIMEOUT');
    const single: Database = { run: () => Promise.reject(pgError('23514')), locateFailingRow: locate };
    expect((await failure(contextFor('{"sku":"a"}', single))).details).toEqual({ sqlstate: '23514' });
    expect(locate).not.toHaveBeenCalled();
  });

  it('treats data exceptions, integrity violations, 21000 and 42501 as row errors', () => {
    expect(['22P02', '22003', '23505', '23514', '23502', '21000', '42501'].map((code) => isRowError({ code }))).toEqual(Array(7).fill(true));
    expect(['57014', '40001', '08006', '42P01', undefined].map((code) => isRowError({ code }))).toEqual(Array(5).fill(false));
  });
});
