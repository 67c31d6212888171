/**
 * One canonical allow-list pattern per query shape in the PostgREST dialect (docs/allow-list.md,
 * docs/postgrest-dialect.md): parameter order, values and aliases do not change it; the shape does.
 * And the shape of the read statement: paged before its embeds, no caller text in it.
 */
import type { Command } from '../../../lib/command/command';
import type { GatewayRequest } from '../../../lib/pipeline/gateway-request';
import type { ParseContext } from '../../../lib/pipeline/stage-types';
import { queryPattern } from '../../../lib/doors/shared/query-pattern';
import { createCompileStage } from '../../../lib/stages/compile/create-compile-stage';
import { createPostgrestParseStage } from '../../../lib/doors/postgrest/parse/create-postgrest-parse-stage';
import { testConfig } from '../auth/config-fixture';
import { representativeSchema } from '../support/compiler-names';

const parse = createPostgrestParseStage();

function pattern(query: string, headers: Record<string, string> = {}, path = 'Qparent'): string | undefined {
  const request: GatewayRequest = { id: 'r', method: 'GET', segments: [path], rawSegments: [path], query: [...new URLSearchParams(query)].map(([k, v]) => [k, v] as const), headers, body: undefined, loopback: true };
  const ctx = { request, config: testConfig({ schemas: ['Qs'] }), schema: representativeSchema, identity: {}, db: {} } as unknown as ParseContext;
  return queryPattern(parse(ctx) as Command);
}

it('ignores values, parameter order and aliases', () => {
  const a = pattern('select=Qid,n:Qname,Qchild(Qlabel)&Qname=eq.a&Qid=gt.1&or=(Qid.eq.1,Qname.like.x*)&order=Qid.desc&limit=5');
  const b = pattern('or=(Qname.like.y*,Qid.eq.2)&limit=50&Qid=gt.7&order=Qid.desc&Qname=eq.zzz&select=Qid,other:Qname,Qchild(Qlabel)');
  expect(a).toBe('GET Qs.Qparent select=Qid,Qname,Qchild(Qlabel) Qid=gt Qname=eq or=(Qid.eq,Qname.like) order=Qid.desc limit');
  expect(b).toBe(a);
});

it('names the shape: operators, negation, embedded levels, count and media', () => {
  expect(pattern('Qname=not.in.(a)&Qchild.Qlabel=eq.x&select=Qid,Qchild(Qlabel)', { prefer: 'count=exact', accept: 'text/csv' })).toBe(
    'GET Qs.Qparent select=Qid,Qchild(Qlabel) Qname=not.in Qchild.Qlabel=eq count=exact accept=csv',
  );
  expect(pattern('Qname=eq.a')).not.toBe(pattern('Qname=neq.a'));
  expect(pattern('select=Qid')).not.toBe(pattern('select=Qname'));
  expect(pattern('select=Qid', { range: '0-4' })).toBe('GET Qs.Qparent select=Qid limit');
});

describe('the read statement', () => {
  const compile = createCompileStage();
  const statement = (query: string): string => {
    const request: GatewayRequest = { id: 'r', method: 'GET', segments: ['Qparent'], rawSegments: ['Qparent'], query: [...new URLSearchParams(query)].map(([k, v]) => [k, v] as const), headers: {}, body: undefined, loopback: true };
    const config = testConfig({ schemas: ['Qs'] });
    const command = parse({ request, config, schema: representativeSchema, identity: {}, db: {} } as unknown as ParseContext) as Command;
    const plan = compile({ command, config } as never) as { query: { text: string } };
    return plan.query.text;
  };

  it('pages the top level before building its embeds, unless a condition or !inner reads them', () => {
    expect(statement('select=Qid,Qchild(Qlabel)&order=Qid&limit=5')).toContain('FROM (SELECT "_n0".* FROM "Qs"."Qparent" AS "_n0" ORDER BY "_n0"."Qid" ASC LIMIT 5 OFFSET 0) AS "_n0" LEFT JOIN LATERAL');
    expect(statement('select=Qid,Qchild!inner(Qlabel)&limit=5')).not.toContain('SELECT "_n0".*');
    expect(statement('select=Qid,Qchild(Qlabel)&Qchild=not.is.null&limit=5')).not.toContain('SELECT "_n0".*');
  });

  it('orders by a to-one embed with the related-order mechanism (order=rel(col)): a subquery on the foreign key, paged first', () => {
    const parsed = (query: string) => {
      const request: GatewayRequest = { id: 'r', method: 'GET', segments: ['Qchild'], rawSegments: ['Qchild'], query: [...new URLSearchParams(query)].map(([k, v]) => [k, v] as const), headers: {}, body: undefined, loopback: true };
      return parse({ request, config: testConfig({ schemas: ['Qs'] }), schema: representativeSchema, identity: {}, db: {} } as unknown as ParseContext) as Extract<Command, { kind: 'read' }>;
    };
    const command = parsed('select=Qlabel,p:Qparent(Qname)&order=p(Qname).desc&limit=5');
    const [term] = command.root.order;
    expect(term!.embed).toBeNull();
    expect(term!.related!.map((s) => [s.relation.target.name, s.spelled])).toEqual([['Qparent', 'Qparent']]);
    // The embed's own filter is a condition on the related row (a row it leaves out orders as NULL).
    expect(parsed('select=Qlabel,Qparent(Qname)&Qparent.Qname=eq.x&order=Qparent(Qname)').root.order[0]!.related![0]!.rowFilters).toHaveLength(1);
    // The allow-list pattern is the one the embed-ordered read had.
    expect(queryPattern(command)).toBe('GET Qs.Qchild select=Qlabel,Qparent(Qname) order=Qparent(Qname).desc limit');
    const compile = createCompileStage();
    const text = (compile({ command, config: testConfig({ schemas: ['Qs'] }) } as never) as { query: { text: string } }).query.text;
    expect(text).toContain('ORDER BY (SELECT "_or0_0"."Qname" FROM "Qs"."Qparent" AS "_or0_0" WHERE "_or0_0"."Qid" = "_n0"."Qparent_id") DESC');
    expect(text).toContain('SELECT "_n0".* FROM "Qs"."Qchild" AS "_n0" ORDER BY');
  });

  it('binds output keys, JSON path keys and values; writes no caller text', () => {
    const text = statement('select=zz_alias:Qname,Qid&Qname=eq.zz_value');
    expect(text).not.toContain('zz_');
  });
});
