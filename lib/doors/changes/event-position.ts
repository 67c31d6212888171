/**
 * Event positions (docs/change-feed.md, "Resuming"): the `id:` of each event. The commit LSN of
 * the change's transaction (16 hex digits) and the change's index in it (8 hex digits), so that
 * comparing two ids as strings orders them as the WAL does: commit order, then order within the
 * transaction. Clients treat them as opaque. Never: accepts an id it cannot read (a 400).
 */
import { GatewayError } from '../../errors/gateway-error';

const shape = /^[0-9A-F]{16}-[0-9A-F]{8}$/;

/** `0/16B3748` (PostgreSQL's pg_lsn text) -> its 64-bit value as 16 hex digits. */
export function lsnKey(lsn: string): string {
  const slash = lsn.indexOf('/');
  const high = lsn.slice(0, slash).toUpperCase().padStart(8, '0');
  const low = lsn.slice(slash + 1).toUpperCase().padStart(8, '0');
  return high + low;
}

/** 16 hex digits -> PostgreSQL's `X/Y` text of the LSN. */
export function lsnText(key: string): string {
  return `${key.slice(0, 8).replace(/^0+(?=.)/, '')}/${key.slice(8).replace(/^0+(?=.)/, '')}`;
}

export function eventId(commitLsnKey: string, index: number): string {
  return `${commitLsnKey}-${index.toString(16).toUpperCase().padStart(8, '0')}`;
}

/**
 * The position before every change of transactions committed at or after `lsnKey`: every event
 * id of such a change compares greater (a prefix sorts first).
 */
export function positionBefore(commitLsnKey: string): string {
  return `${commitLsnKey}-`;
}

/** A `Last-Event-ID` header: the id, or a 400 when it is not one this feed wrote. */
export function readEventId(text: string): string {
  const id = text.trim().toUpperCase();
  if (!shape.test(id)) {
    throw new GatewayError('PARSE_ERROR', 'Last-Event-ID is not an event id of this feed.', { hint: 'Send the `id:` of the last event received, or no Last-Event-ID to start from now.' });
  }
  return id;
}
