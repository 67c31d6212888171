/**
 * `RAISE SQLSTATE 'PTxyz'` -> HTTP status xyz (PostgREST's convention, so functions written for
 * PostgREST keep working; see docs/errors.md "Functions choose their status").
 * In: a SQLSTATE. Out: the status, or undefined when the code is not PT followed by a 4xx/5xx
 * status that Node.js knows (it writes the reason phrase from that list). Never: accepts 1xx-3xx,
 * which would turn an error into a success or a redirect.
 */
import { STATUS_CODES } from 'node:http';

export function functionStatus(sqlstate: string): number | undefined {
  const match = /^PT([45]\d\d)$/.exec(sqlstate);
  if (!match) return undefined;
  const status = Number(match[1]);
  return STATUS_CODES[status] === undefined ? undefined : status;
}
