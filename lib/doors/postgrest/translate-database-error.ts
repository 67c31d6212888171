/**
 * The PostgREST dialect's meaning of a database error, tried by execute before the catalogue's
 * (the door's hook, lib/pipeline/door.ts): a function's `RAISE SQLSTATE 'PGRST'`, and the
 * statement's own checks for `Prefer: max-affected` (PGRST124) and a singular write (PGRST116),
 * docs/postgrest-dialect.md, "Errors". Undefined for any other error.
 */
import type { GatewayError } from '../../errors/gateway-error';
import { markedCount, maxAffectedMarker, singularMarker } from '../../errors/statement-markers';
import { PostgrestError, raisedPostgrestError } from './postgrest-error';

export function translateDatabaseError(err: unknown): GatewayError | undefined {
  const raised = raisedPostgrestError(err);
  if (raised) return raised;
  const affected = markedCount(err, maxAffectedMarker);
  if (affected !== undefined) return new PostgrestError('PGRST124', 'Query result exceeds max-affected preference constraint', { details: `The query affects ${affected} rows` });
  const written = markedCount(err, singularMarker);
  if (written !== undefined) return new PostgrestError('PGRST116', 'Cannot coerce the result to a single JSON object', { details: `The result contains ${written} rows` });
  return undefined;
}
