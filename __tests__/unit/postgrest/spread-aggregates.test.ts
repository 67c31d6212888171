/**
 * Aggregates of a spread in the PostgREST dialect (docs/postgrest-dialect.md, "Aggregates"): a
 * to-one spread's are computed by the level above over its own rows, a to-many spread's are
 * refused (PGRST127, PostgREST 13) at parse, before any SQL.
 */
import type { Command } from '../../../lib/command/command';
import type { GatewayRequest } from '../../../lib/pipeline/gateway-request';
import type { ParseContext } from '../../../lib/pipeline/stage-types';
import { createCompileStage } from '../../../lib/stages/compile/create-compile-stage';
import { createPostgrestParseStage } from '../../../lib/doors/postgrest/parse/create-postgrest-parse-stage';
import { testConfig } from '../auth/config-fixture';
import { representativeSchema } from '../support/compiler-names';

const parse = createPostgrestParseStage();
const compile = createCompileStage();

function statement(table: string, query: string): string {
  const request: GatewayRequest = { id: 'r', method: 'GET', segments: [table], rawSegments: [table], query: [...new URLSearchParams(query)].map(([k, v]) => [k, v] as const), headers: {}, body: undefined, loopback: true };
  const config = testConfig({ schemas: ['Qs'] });
  const command = parse({ request, config, schema: representativeSchema, identity: {}, db: {} } as unknown as ParseContext) as Command;
  const plan = compile({ command, config } as never) as { query: { text: string } };
  return plan.query.text;
}

describe('a to-one spread of aggregates', () => {
  it('passes the values up (count(): true) and aggregates them at the level above, without grouping by the spread', () => {
    const text = statement('Qchild', 'select=...Qparent(count(),Qid.sum())');
    expect(text).toMatch(/SELECT json_build_object\(\) AS j, true AS "h0", "_n\d+"\."Qid" AS "h1" FROM "Qs"\."Qparent"/);
    expect(text).toMatch(/count\("_g\d+"\."c0_0"\)/);
    expect(text).toMatch(/sum\("_g\d+"\."c0_1"\)/);
    expect(text).not.toContain('GROUP BY');
  });

  it('groups by the level\'s columns and the spread\'s other columns', () => {
    const text = statement('Qchild', 'select=Qlabel,...Qparent(Qname,count())');
    expect(text).toMatch(/GROUP BY "_g\d+"\."c0", "_g\d+"\."c1"/);
    expect(text).toMatch(/count\("_g\d+"\."c1_1"\)/);
  });
});

it('a to-many spread of aggregates is PGRST127 at parse', () => {
  expect(() => statement('Qparent', 'select=...Qchild(count())')).toThrow(expect.objectContaining({ pgrstCode: 'PGRST127' }));
});
