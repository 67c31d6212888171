/**
 * Markers a statement fails with when a check it carries does not hold (a write's `maxAffected`,
 * a write asked for as exactly one row: lib/stages/compile/compile-read-back-write.ts). The check
 * fails with an input-function error (22P02) whose message quotes the marker; a caller's value in
 * an integer column fails with the same code and quotes the value. The random part, new in each
 * process, keeps a value spelling the marker from passing for it. The nonce is only ever a bound
 * value, and the error that carries it is replaced (by the door that asked for the check) before
 * any caller sees it.
 */
import { randomBytes } from 'node:crypto';

const markerNonce = randomBytes(16).toString('hex');
/** The text of the error a write's statement raises when it wrote more rows than its `maxAffected` allows. */
export const maxAffectedMarker = `tablegate_max_affected_exceeded_${markerNonce}`;
/** The same for a write asked for as one object that wrote another number of rows. */
export const singularMarker = `tablegate_singular_write_violated_${markerNonce}`;

/** The statement's own failure quoting `marker`, then the count: the count; undefined for any other error. */
export function markedCount(err: unknown, marker: string): string | undefined {
  const e = (err ?? {}) as { code?: unknown; message?: unknown };
  if (e.code !== '22P02' || typeof e.message !== 'string') return undefined;
  return new RegExp(`"${marker}:(\\d+)"`).exec(e.message)?.[1];
}
