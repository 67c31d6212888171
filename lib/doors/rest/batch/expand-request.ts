/**
 * Which requests of the REST door stand for several (docs/writing.md): `POST /_batch`, a
 * `POST /{table}` whose object body holds related rows under a relation name (a nested insert)
 * and `PATCH /{table}` with an array body (a bulk update). In: the request, the schema cache.
 * Out: undefined for any other request (checked without parsing the body, except a POST object
 * body's keys), else the function that makes the Expansion once the caller is authenticated.
 */
import type { Expansion } from '../../../pipeline/door';
import type { GatewayRequest } from '../../../pipeline/gateway-request';
import type { ResolvedConfig } from '../../../pipeline/resolved-config';
import type { SchemaCache } from '../../../schema/schema-types';
import { bulkUpdate } from './bulk-update';
import { isNestedInsert, nestedInsert } from './nested-insert';
import { toOperation } from './operation-template';
import { parseBatch } from './parse-batch';
import { batchAnswer } from './batch-answer';

export const batchRoute = '_batch';

export function expandRequest(request: GatewayRequest, schema: SchemaCache, config: ResolvedConfig): (() => Expansion) | undefined {
  const [first, second] = request.segments;
  if (first === undefined || second !== undefined) return undefined;
  if (first === batchRoute && request.method === 'POST') {
    return () => {
      const operations = parseBatch(request, config).map((t) => toOperation(t, request, config.maxRequestBodyBytes));
      return Object.freeze({ operations, skipsNotFound: false, answer: batchAnswer });
    };
  }
  if (request.method !== 'POST' && request.method !== 'PATCH') return undefined;
  const table = schema.tablesByName.get(first);
  const body = request.body?.trimStart();
  if (table === undefined || body === undefined) return undefined;
  if (request.method === 'PATCH' && body.startsWith('[')) return () => bulkUpdate(table, request, config);
  if (request.method === 'POST' && body.startsWith('{') && isNestedInsert(table, body)) return () => nestedInsert(schema, table, request, config);
  return undefined;
}
