/**
 * A door's execute hooks (lib/pipeline/door.ts): execute sets the door's `request.*` settings on
 * the plan it runs and tries the door's error translation before the catalogue's, and without
 * hooks does neither. The Database is a stand-in for the stage's interface; the settings and
 * errors themselves are checked against PostgreSQL in postgrest-features.test.ts and
 * postgrest-write.test.ts. Also: the PostgREST door's translation of its statement checks.
 */
import { GatewayError } from '../../../lib/errors/gateway-error';
import { maxAffectedMarker, singularMarker } from '../../../lib/errors/statement-markers';
import { createCompileStage } from '../../../lib/stages/compile/create-compile-stage';
import { createExecuteStage } from '../../../lib/stages/execute/create-execute-stage';
import type { Database, QueryPlan, RequestSettings } from '../../../lib/pipeline/database';
import { parseInsert } from '../../../lib/doors/rest/parse/parse-insert';
import { translateDatabaseError } from '../../../lib/doors/postgrest/translate-database-error';
import type { ExecuteContext } from '../../../lib/pipeline/stage-types';
import { testConfig } from '../auth/config-fixture';
import { items, writeRequest } from '../writes/write-fixture';

const config = testConfig();
const settings: RequestSettings = { claims: '{"role":"x"}', method: 'POST', path: '/items', headers: '{}' };
const uniqueViolation = Object.assign(new Error('duplicate key value violates unique constraint "items_pkey"'), { code: '23505' });

function contextFor(db: Database): ExecuteContext {
  const command = parseInsert(items, writeRequest('POST', '{"sku":"a"}'), config);
  const base = { request: {} as never, config, schema: {} as never, db, identity: {} as never, command };
  return { ...base, plan: createCompileStage()(base) as never };
}

const okRow = { rows: [['null', '1']] };

describe('execute: a door\'s hooks', () => {
  it('runs the plan with the door\'s request.* settings, and without them when the door gives none', async () => {
    const seen: QueryPlan[] = [];
    const db: Database = { run: (_i, plan) => (seen.push(plan), Promise.resolve(okRow)), locateFailingRow: () => Promise.resolve(undefined) };
    await createExecuteStage({ requestSettings: () => settings })(contextFor(db));
    await createExecuteStage()(contextFor(db));
    expect(seen.map((p) => p.request)).toEqual([settings, undefined]);
  });

  it('throws the door\'s translation of a database error, and the catalogue\'s when the door has none', async () => {
    const db: Database = { run: () => Promise.reject(uniqueViolation), locateFailingRow: () => Promise.resolve(undefined) };
    const mine = new GatewayError('PARSE_ERROR', 'the door says so');
    const failure = (hooks: Parameters<typeof createExecuteStage>[0]) => Promise.resolve(createExecuteStage(hooks)(contextFor(db))).then(() => undefined, (e: unknown) => e);
    expect(await failure({ translateError: () => mine })).toBe(mine);
    expect(await failure({ translateError: () => undefined })).toMatchObject({ code: 'CONFLICT' });
    expect(await failure({})).toMatchObject({ code: 'CONFLICT' });
  });
});

describe('the PostgREST door: its statement checks', () => {
  const marked = (marker: string, n: number) => Object.assign(new Error(`invalid input syntax for type integer: "${marker}:${n}"`), { code: '22P02' });
  it('max-affected is PGRST124 and a singular write PGRST116, with the count; other errors are left to the catalogue', () => {
    expect(translateDatabaseError(marked(maxAffectedMarker, 3))).toMatchObject({ pgrstCode: 'PGRST124', details: 'The query affects 3 rows' });
    expect(translateDatabaseError(marked(singularMarker, 2))).toMatchObject({ pgrstCode: 'PGRST116', details: 'The result contains 2 rows' });
    // A caller's value that spells the marker without its per-process nonce is the caller's 22P02.
    expect(translateDatabaseError(marked('tablegate_max_affected_exceeded', 3))).toBeUndefined();
    expect(translateDatabaseError(uniqueViolation)).toBeUndefined();
  });
});
