/**
 * The page fields of a read that is not a page: a row addressed by its key (parse-get.ts) and an
 * aggregate (parse-aggregate.ts). Their defaults, in one place: no order, no offset or cursor, no
 * count, no parent; the allow-list pattern names none of them. One frozen object, spread into each command.
 */
import type { ReadCommand } from '../../../command/command';

/** An empty list shared by every command that has none of something. */
export const none: readonly never[] = Object.freeze([]);

export const unpaged = Object.freeze({
  count: null,
  media: 'page',
  plan: null,
  explicitLimit: false,
  explicitOffset: false,
  head: false,
} satisfies Partial<ReadCommand>);
