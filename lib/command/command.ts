/**
 * The typed command that `parse` produces and every later stage consumes. Kind-tagged so
 * stages `switch (command.kind)` exhaustively: adding a kind fails the build until every stage
 * handles it. Every name in here is a resolved schema object, never caller text.
 */
import type { Column, Table } from '../schema/schema-types';

export type FilterOp = 'eq' | 'ne' | 'gt' | 'gte' | 'lt' | 'lte' | 'in' | 'like' | 'ilike' | 'is_null' | 'contains';

export const filterOps: readonly FilterOp[] = ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'in', 'like', 'ilike', 'is_null', 'contains'];

/** One condition on one column. Values stay text; PostgreSQL converts them with the column's input function. */
export type Filter =
  | { readonly column: Column; readonly op: 'eq' | 'ne' | 'gt' | 'gte' | 'lt' | 'lte' | 'like' | 'ilike' | 'contains'; readonly value: string }
  | { readonly column: Column; readonly op: 'in'; readonly value: readonly string[] }
  | { readonly column: Column; readonly op: 'is_null'; readonly value: boolean };

export interface SortKey {
  readonly column: Column;
  readonly descending: boolean;
}

export interface Search {
  /** Raw web-style query text for `websearch_to_tsquery`. */
  readonly query: string;
  readonly columns: readonly Column[];
}

/** A decoded, verified cursor: the text values of the sort keys then the tie-breaker keys of the last row. */
export interface CursorPosition {
  readonly values: readonly (string | null)[];
}

export interface ListCommand {
  readonly kind: 'list';
  readonly table: Table;
  /** Columns returned, in order. */
  readonly select: readonly Column[];
  /** True when the caller named the columns with `select`. */
  readonly explicitSelect: boolean;
  readonly filters: readonly Filter[];
  readonly search: Search | null;
  /** Caller's sort keys, in order. */
  readonly sort: readonly SortKey[];
  /**
   * The full ordering: `sort` followed by the tie-breaker (primary key, or the distinct column)
   * keys not already sorted on. Empty when the table has neither.
   */
  readonly order: readonly SortKey[];
  readonly limit: number;
  readonly offset: number;
  readonly cursor: CursorPosition | null;
  readonly distinct: Column | null;
  readonly countExact: boolean;
}

export interface GetCommand {
  readonly kind: 'get';
  readonly table: Table;
  readonly select: readonly Column[];
  readonly explicitSelect: boolean;
  /** Primary-key column = text value, in key order. */
  readonly key: readonly { readonly column: Column; readonly value: string }[];
}

export type Command = ListCommand | GetCommand;

export type CommandKind = Command['kind'];

export function assertNever(value: never, what = 'value'): never {
  throw new Error(`unhandled ${what}: ${JSON.stringify(value)}`);
}
