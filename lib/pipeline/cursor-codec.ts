/**
 * Opaque keyset cursors (docs/querying.md, "Cursor"): the last row's sort-key values plus the primary key,
 * bound to the table and sort they came from, and HMAC-SHA256 signed so a tampered, foreign or
 * mismatched cursor is a 400 rather than a query over values the caller invented.
 */
import { createHmac, createSecretKey, timingSafeEqual } from 'node:crypto';
import type { OrderTerm } from '../command/command';
import type { Table } from '../schema/schema-types';
import { GatewayError } from '../errors/gateway-error';

const MAX_CURSOR_LENGTH = 16 * 1024;

export interface CursorCodec {
  encode(table: Table, order: readonly OrderTerm[], values: readonly (string | null)[]): string;
  /** Throws PARSE_ERROR unless the cursor was made by `encode` for this table and order. */
  decode(table: Table, order: readonly OrderTerm[], cursor: string): (string | null)[];
}

/** The cursor's binding: which table and ordering its values belong to. */
function signatureOf(table: Table, order: readonly OrderTerm[]): string {
  return JSON.stringify([table.schema, table.name, order.map((k) => (k.related ? [k.field.column.name, k.descending, k.related.map((r) => r.relation.foreignKey.name)] : [k.field.column.name, k.descending]))]);
}

export function createCursorCodec(key: Buffer): CursorCodec {
  // One update of the joined text: the same bytes as updating the three parts in turn, so cursors
  // issued before stay valid, for one call into the hash instead of three; a KeyObject made once
  // instead of the raw key per call, and the text digest straight from the hash (docs/performance.md).
  const secret = createSecretKey(key);
  const hmac = (payload: string, binding: string) => createHmac('sha256', secret).update(`${binding}\u0000${payload}`);
  const mac = (payload: string, binding: string): Buffer => hmac(payload, binding).digest();
  const invalid = (why: string): GatewayError =>
    new GatewayError('PARSE_ERROR', `The cursor is invalid: ${why}.`, { hint: 'Use the next_cursor of a previous page of the same query (same table and sort), without offset.' });

  const codec: CursorCodec = {
    encode(table, order, values) {
      const payload = Buffer.from(JSON.stringify(values), 'utf8').toString('base64url');
      return `${payload}.${hmac(payload, signatureOf(table, order)).digest('base64url')}`;
    },
    decode(table, order, cursor) {
      if (cursor.length > MAX_CURSOR_LENGTH) throw invalid('it is too long');
      const [payload, signature, extra] = cursor.split('.');
      if (payload === undefined || signature === undefined || extra !== undefined) throw invalid('it is malformed');
      const given = Buffer.from(signature, 'base64url');
      const expected = mac(payload, signatureOf(table, order));
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
        throw invalid('it was altered, or it belongs to another table or sort');
      }
      let values: unknown;
      try {
        values = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
      } catch {
        throw invalid('it is malformed');
      }
      if (!Array.isArray(values) || values.length !== order.length || !values.every((v) => v === null || typeof v === 'string')) {
        throw invalid('it is malformed');
      }
      return values as (string | null)[];
    },
  };
  return Object.freeze(codec);
}
