/**
 * How the PostgREST dialect reads a call whose function returns no set of rows, without a
 * database (docs/postgrest-dialect.md, "Functions"): which calls get a read over their result,
 * the one column `pgrst_scalar` of a scalar, bodies that are not JSON, and which Accept answers a
 * media type domain's value as it is. The statements run against PostgreSQL in
 * __tests__/integration/postgrest-rpc-values.test.ts.
 */
import type { RpcCommand } from '../../../lib/command/command';
import { GatewayError } from '../../../lib/errors/gateway-error';
import { parsePostgrestRpc } from '../../../lib/doors/postgrest/parse/parse-postgrest-rpc';
import { rawAccepted } from '../../../lib/doors/postgrest/parse/postgrest-headers';
import type { GatewayRequest } from '../../../lib/pipeline/gateway-request';
import { representativeSchema } from '../support/compiler-names';
import { testConfig } from '../auth/config-fixture';

const config = testConfig({ schemas: ['Qs'] });
const ctx = { schema: representativeSchema, config, profile: 'Qs' };

function call(method: string, name: string, query = '', headers: Record<string, string> = {}, body?: string | Uint8Array): RpcCommand {
  const request: GatewayRequest = {
    id: 't', method, segments: ['rpc', name], rawSegments: ['rpc', name],
    query: [...new URLSearchParams(query)].map(([k, v]) => [k, v] as const),
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : undefined,
    ...(body instanceof Uint8Array ? { bodyBytes: body } : {}),
    loopback: true,
  };
  return parsePostgrestRpc(name, request, ctx) as RpcCommand;
}

const failure = (f: () => unknown): string => {
  try {
    f();
  } catch (e) {
    return e instanceof GatewayError ? `${e.code} ${e.message}` : String(e);
  }
  return 'no error';
};

describe('which calls are read', () => {
  it('one value without read parameters is answered as it is; with them, or with another body asked for, it is read', () => {
    expect(call('GET', 'Qscalar', 'Qx=a').answer?.read).toBeNull();
    expect(call('GET', 'Qscalar', 'Qx=a&select=*').answer?.read).toBeNull();
    const filtered = call('GET', 'Qscalar', 'Qx=a&pgrst_scalar=eq.b').answer?.read;
    expect(filtered?.root.items.map((i) => i.kind === 'field' && i.field.column.name)).toEqual(['pgrst_scalar']);
    expect(filtered?.root.where).toHaveLength(1);
    expect(call('GET', 'Qscalar', 'Qx=a', { accept: 'text/csv' }).answer?.read?.media).toBe('csv');
    expect(call('POST', 'Qrow', 'select=Qtext', {}, '{"Qx":"a"}').answer?.read?.root.items).toHaveLength(1);
  });

  it('a set of scalars is always read (its elements are counted), void never', () => {
    expect(call('GET', 'Qscalars', 'Qx=a').answer?.read?.root.table.columns.map((c) => c.name)).toEqual(['pgrst_scalar']);
    expect(call('POST', 'Qvoid', '', {}, '{"Qx":"a"}').answer?.read).toBeNull();
    expect(failure(() => call('POST', 'Qvoid', 'limit=1', {}, '{"Qx":"a"}'))).toMatch(/PGRST127|Feature not implemented/);
  });

  it('a scalar selects pgrst_scalar (or *) only, under its own name', () => {
    expect(failure(() => call('GET', 'Qscalar', 'Qx=a&select=other'))).toMatch(/^UNKNOWN_COLUMN column Qscalar\.other does not exist/);
    expect(failure(() => call('GET', 'Qscalar', 'Qx=a&select=n:pgrst_scalar'))).toMatch(/^UNKNOWN_COLUMN column _postgrest_t\.pgrst_scalar does not exist/);
    expect(failure(() => call('GET', 'Qscalar', 'Qx=a&select=pgrst_scalar,pgrst_scalar'))).toMatch(/_postgrest_t\.pgrst_scalar/);
    expect(call('GET', 'Qscalar', 'Qx=a&select=pgrst_scalar::text').answer?.read).not.toBeNull();
  });
});

describe('bodies that are not JSON', () => {
  it('octet-stream bytes go to the one unnamed bytea argument as bytea hex input', () => {
    const c = call('POST', 'Qbytes', '', { 'content-type': 'application/octet-stream' }, Uint8Array.from([0xff, 0x00, 0x41]));
    expect({ fn: c.fn.name, notation: c.notation, values: c.values }).toEqual({ fn: 'Qbytes', notation: 'positional', values: '{"1":"\\\\xff0041"}' });
  });

  it('without such a function: 404 PGRST202 naming the argument type', () => {
    expect(failure(() => call('POST', 'Qscalar', '', { 'content-type': 'text/xml' }, '<a/>'))).toBe('NOT_FOUND Could not find the function Qs.Qscalar in the schema cache');
    expect(failure(() => call('POST', 'Qscalar', '', { 'content-type': 'application/octet-stream' }, Uint8Array.from([1])))).toBe('NOT_FOUND Could not find the function Qs.Qscalar in the schema cache');
  });
});

describe('a media type domain answered as it is', () => {
  it('when Accept names it before any type the dialect serves', () => {
    expect(rawAccepted('application/octet-stream', 'application/octet-stream')).toBe(true);
    expect(rawAccepted('text/html, application/octet-stream;q=0.5, application/json', 'application/octet-stream')).toBe(true);
    expect(rawAccepted('application/json, application/octet-stream', 'application/octet-stream')).toBe(false);
    expect(rawAccepted('*/*', 'application/octet-stream')).toBe(false);
    expect(rawAccepted(undefined, 'text/plain')).toBe(false);
  });

  it('the call carries the media type and whether the value is bytes; read parameters or another Accept keep JSON', () => {
    const bytes = Uint8Array.from([1]);
    const raw = call('POST', 'Qbytes', '', { 'content-type': 'application/octet-stream', accept: 'application/octet-stream' }, bytes);
    expect(raw.answer?.raw).toEqual({ type: 'application/octet-stream', bytes: true });
    expect(call('POST', 'Qbytes', '', { 'content-type': 'application/octet-stream' }, bytes).answer?.raw).toBeUndefined();
    expect(call('POST', 'Qscalar', '', { accept: 'application/octet-stream, application/json' }, '{"Qx":"a"}').answer?.raw).toBeUndefined();
  });
});
