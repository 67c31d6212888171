/**
 * requestLimits: the caps on the counts a query string controls, checked by parse before any SQL
 * exists (docs/querying.md, "Limits", lists them all with the caps of the other layers).
 * In: counts and lengths taken from the request. Out: nothing, or a 400 PARSE_ERROR whose message
 * names the cap and its value and whose `details` are `{ limit, max, given }`.
 * Never: lets a count through that could reach one of PostgreSQL's own limits (100 function
 * arguments, `max_stack_depth`, 1,664 target-list entries) or make the work of one request grow
 * without bound. Each cap is far below those limits and far above what a real query needs.
 */
import { GatewayError } from '../../errors/gateway-error';

export const requestLimits = Object.freeze({
  /** Filter parameters of one list, child, explain or aggregate request. */
  filters: 100,
  /**
   * Entries of `sort`. With the primary-key tie-breaker (at most 32 columns, PostgreSQL's
   * INDEX_MAX_KEYS) the ordering keys stay below the 100 arguments of json_build_array, which
   * carries the last row's keys for next_cursor.
   */
  sortKeys: 32,
  /** Names in `select`, `search_columns`, `returning` and `X-On-Conflict`: a table has at most 1,600 columns. */
  columnNames: 1600,
  /** Mentions of one column in `select` (they select it once; more is a mistake or an attack on the page size). */
  columnRepeats: 4,
  /** Items of one `in` list (bound as one array parameter). */
  inItems: 1000,
  /**
   * Characters of `search`. websearch_to_tsquery turns a phrase (or a hyphenated word) into a
   * chain of `<->` nodes that PostgreSQL walks recursively; around 20,000 words exceed
   * `max_stack_depth` (SQLSTATE 54001).
   */
  searchCharacters: 1000,
  /** Whitespace-separated words of `search`. */
  searchTerms: 100,
  /** Relations in one `expand` (each is a correlated subquery per row of the page). */
  expansions: 16,
});

export type RequestLimit = keyof typeof requestLimits;

/** Names used in `details.limit`, as in the docs table. */
const detailNames: Readonly<Record<RequestLimit, string>> = {
  filters: 'filters',
  sortKeys: 'sort_keys',
  columnNames: 'column_names',
  columnRepeats: 'column_repeats',
  inItems: 'in_items',
  searchCharacters: 'search_characters',
  searchTerms: 'search_terms',
  expansions: 'expansions',
};

/**
 * Throws PARSE_ERROR when `given` is over the cap. `what` completes "The request has <given>
 * <what>": e.g. "filters", "entries in `sort`".
 */
export function checkLimit(limit: RequestLimit, given: number, what: string): void {
  const max = requestLimits[limit];
  if (given <= max) return;
  throw new GatewayError('PARSE_ERROR', `The request has ${given} ${what}; at most ${max} are accepted.`, {
    details: { limit: detailNames[limit], max, given },
    hint: 'See "Limits" in docs/querying.md.',
  });
}
