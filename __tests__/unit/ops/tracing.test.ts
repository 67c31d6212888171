/**
 * Tracing is decided once, at construction (docs/observability.md): off by default, so no
 * wrapper exists; on without @opentelemetry/api installed is a configuration error; and the
 * context statement carries the trace only when a plan has one.
 */
import { resolveConfig } from '../../../lib/config/resolve-config';
import { contextQuery } from '../../../lib/db/pipelined-transaction';
import { createTracing } from '../../../lib/ops/tracing/create-tracing';
import { dbOperationOf } from '../../../lib/ops/tracing/db-operation';
import { testConfig } from '../auth/config-fixture';

const settings = { tenantId: 't', userId: 'u', agentId: 'a', statementTimeoutMs: 1000, searchPath: 'public', readOnly: true };

describe('createTracing', () => {
  it('is undefined when tracing is unset or false: the request path stays unwrapped', () => {
    const load = jest.fn();
    expect(createTracing(testConfig(), '1.0.0', load)).toBeUndefined();
    expect(createTracing(testConfig({ tracing: false }), '1.0.0', load)).toBeUndefined();
    expect(load).not.toHaveBeenCalled();
  });

  it('refuses tracing without @opentelemetry/api, naming the fix', () => {
    expect(() => createTracing(testConfig({ tracing: true }), '1.0.0', () => undefined)).toThrow(/npm install @opentelemetry\/api/);
  });

  it('wraps the handler and every stage when on', () => {
    const tracing = createTracing(testConfig({ tracing: { tenantAttribute: true } }), '1.0.0');
    expect(tracing).toBeDefined();
  });
});

describe('the tracing option', () => {
  it('takes true, false or a table with tenant_attribute, and nothing else', () => {
    expect(resolveConfig({ databaseUrl: 'postgres://x@localhost/db', tracing: true }).tracing).toBe(true);
    expect(resolveConfig({ databaseUrl: 'postgres://x@localhost/db', tracing: { tenantAttribute: true } }).tracing).toEqual({ tenantAttribute: true });
    expect(() => resolveConfig({ databaseUrl: 'postgres://x@localhost/db', tracing: { tenant: true } as never })).toThrow(/tracing/);
  });
});

describe('the context statement', () => {
  it('sets tablegate.trace_id and application_name only when the plan carries a trace, after the other parameters', () => {
    expect(contextQuery(settings).text).not.toMatch(/trace_id|application_name/);
    const traced = contextQuery({ ...settings, trace: { traceId: 'a'.repeat(32), traceparent: `00-${'a'.repeat(32)}-${'b'.repeat(16)}-01` } });
    expect(traced.text).toContain("set_config('tablegate.trace_id', $6, true), set_config('application_name', $7, true)");
    expect(traced.values.slice(5)).toEqual(['a'.repeat(32), `00-${'a'.repeat(32)}-${'b'.repeat(16)}-01`]);
    const request = { claims: '{}', method: 'GET', path: '/x', headers: '{}' };
    const both = contextQuery({ ...settings, request, trace: { traceId: 'c'.repeat(32), traceparent: 'p' } });
    expect(both.text).toContain("set_config('tablegate.trace_id', $11, true), set_config('application_name', $12, true)");
    expect(both.values).toHaveLength(12);
  });
});

describe('dbOperationOf', () => {
  it('names the SQL operation and the table, never the statement', () => {
    const table = { name: 'orders', schema: 'public' };
    expect(dbOperationOf({ kind: 'insert', table } as never)).toEqual({ operation: 'INSERT', collection: 'orders', namespace: 'public' });
    expect(dbOperationOf({ kind: 'rpc', fn: { name: 'f', schema: 'api' } } as never)).toEqual({ operation: 'SELECT', procedure: 'f', namespace: 'api' });
  });
});
