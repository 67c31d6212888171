/**
 * Result: what `execute` hands to rendering. The raw text columns of the rows of the plan's
 * statement (PostgreSQL builds the JSON; nothing is parsed). Which column is what is said by the
 * plan's shape (plan.ts), never by a render file's knowledge of how compile built the statement.
 */
import type { RowStream } from './row-stream';

export interface Result {
  readonly rows: readonly (readonly (string | null)[])[];
  /** With `plan.binaryResults`: the result columns and the raw bytes of each row's fields. */
  readonly binary?: {
    readonly fields: readonly { readonly name: string; readonly typeOid: number }[];
    readonly rows: readonly (readonly (Buffer | null)[])[];
  };
  /** With `plan.estimate`: its EXPLAIN (FORMAT JSON) text, when the Database ran it. */
  readonly estimate?: string;
  /** With a `stream` shape: the rows, read as they are written (`rows` is then empty). */
  readonly stream?: RowStream;
}
