/** A write-test table and request builder for the unit tests of parse / compile / render (no database). */
import type { GatewayRequest } from '../../../lib/pipeline/gateway-request';
import { makeTable } from '../support/schema-fixture';

export const items = (() => {
  const t = makeTable(
    'items',
    [
      ['id', 'bigint', { identity: 'a', hasDefault: true }],
      ['tenant_id', 'uuid', { hasDefault: true }],
      ['sku', 'text'],
      ['name', 'text'],
      ['qty', 'integer'],
      ['qty_doubled', 'integer', { generated: true }],
      ['big', 'bigint'],
    ],
    ['id'],
    'app',
  );
  const sku = t.columnsByName.get('sku')!;
  return { ...t, uniqueKeys: [...t.uniqueKeys, { name: 'items_sku_key', columns: [sku], primary: false }] };
})();

export function writeRequest(method: string, body: string | undefined, options: { query?: string; headers?: Record<string, string>; id?: string } = {}): GatewayRequest {
  const segments = options.id === undefined ? ['items'] : ['items', options.id];
  return Object.freeze({
    id: 'test',
    method,
    segments,
    rawSegments: segments,
    query: [...new URLSearchParams(options.query ?? '')].map(([k, v]) => [k, v] as const),
    headers: { 'content-type': 'application/json', ...options.headers },
    body,
    loopback: true,
  });
}
