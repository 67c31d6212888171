/**
 * What one caller may do with each table, as the API descriptions need it (docs/openapi.md,
 * "What a caller sees"). The descriptions never read the policy themselves: create-gateway.ts
 * builds a `CallerAccess` from the configured policies and the caller's identity and passes it in.
 *
 * In: a table of the schema cache. Out: its permitted operations and column tests, or null when
 * the caller may not read it (it is then left out of the description altogether).
 */
import type { Table } from '../schema/schema-types';

export type DescribedOperation = 'read' | 'create' | 'update' | 'delete';

export interface TableAccess {
  readonly operations: ReadonlySet<DescribedOperation>;
  /** The caller may read the column (`read_columns`). */
  readonly readable: (column: string) => boolean;
  /** The caller may set the column in a write body (`write_columns`). */
  readonly writable: (column: string) => boolean;
  /** A write may return the column (`returning_columns`, on top of `readable`). */
  readonly returnable: (column: string) => boolean;
}

export type CallerAccess = (table: Table) => TableAccess | null;

const everything = (): boolean => true;

/** No policy: every table and column, every operation. */
export const fullAccess: CallerAccess = () => FULL;
const FULL: TableAccess = Object.freeze({
  operations: new Set<DescribedOperation>(['read', 'create', 'update', 'delete']),
  readable: everything,
  writable: everything,
  returnable: everything,
});
