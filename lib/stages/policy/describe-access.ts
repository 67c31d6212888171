/**
 * The policies as the API descriptions need them (docs/openapi.md, "What a caller sees"): for one
 * identity, which operations and columns of each table the native [access] policy and the legacy
 * YAML policy let through, asked the same way the policy stage asks (`accessPermit` /
 * `legacyPermit`), so the document and the answers to requests cannot disagree.
 *
 * In: the configured policies and the caller's identity. Out: a `CallerAccess`. Never: reads the
 * request or the database.
 */
import type { CallerAccess, DescribedOperation, TableAccess } from '../../describe/caller-access';
import { fullAccess } from '../../describe/caller-access';
import type { Identity } from '../../pipeline/identity';
import type { Table } from '../../schema/schema-types';
import { accessPermit } from './access-permit';
import { allows, type AccessPolicy, type ColumnSet } from './access-policy';
import type { Grant, Permit } from './enforce-policy';
import { legacyPermit } from './legacy-permit';
import type { LegacyPolicy } from './legacy-policy';

const OPERATIONS: readonly DescribedOperation[] = ['read', 'create', 'update', 'delete'];

export function describeAccess(policies: { access?: AccessPolicy | undefined; legacy?: LegacyPolicy | undefined }, identity: Identity): CallerAccess {
  const permits: Permit[] = [];
  if (policies.access) permits.push(accessPermit(policies.access, identity));
  if (policies.legacy) permits.push(legacyPermit(policies.legacy, identity));
  if (permits.length === 0) return fullAccess;
  return (table: Table): TableAccess | null => {
    const grants = new Map<DescribedOperation, Grant[]>();
    for (const op of OPERATIONS) {
      const granted = permits.map((permit) => grantOrNull(permit, table, op));
      if (granted.every((g): g is Grant => g !== null)) grants.set(op, granted);
    }
    const read = grants.get('read');
    if (read === undefined) return null;
    // Every policy must allow a column (a request must pass all of them).
    const all = (gs: Grant[] | undefined, pick: (g: Grant) => ColumnSet) => (column: string) => gs !== undefined && gs.every((g) => allows(pick(g), column));
    const writeGrants = grants.get('create') ?? grants.get('update');
    return Object.freeze({
      operations: new Set(grants.keys()),
      readable: all(read, (g) => g.read),
      writable: all(writeGrants, (g) => g.write),
      returnable: all(read, (g) => g.returning),
    });
  };
}

function grantOrNull(permit: Permit, table: Table, op: DescribedOperation): Grant | null {
  try {
    return permit(table, op);
  } catch {
    return null;
  }
}
