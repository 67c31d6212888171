/**
 * The page fields of a list that is not a page: a row addressed by its key (parse-get.ts) and an
 * aggregate (parse-aggregate.ts). Their defaults, in one place: no sort, no offset or cursor, no
 * parent; the allow-list pattern names none of them. One frozen object, spread into each command.
 */
import type { ListCommand } from '../../../command/command';

/** An empty list shared by every command that has none of something. */
export const none: readonly never[] = Object.freeze([]);

export const unpaged = Object.freeze({
  sort: none,
  order: none,
  explicitLimit: false,
  offset: 0,
  explicitOffset: false,
  cursor: null,
  distinct: null,
  countExact: false,
  parent: null,
} satisfies Partial<ListCommand>);
