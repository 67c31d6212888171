/**
 * What names one caller may see in an error's hints (docs/security.md, "Names a caller cannot
 * see"): the tables and columns its access policies let it read, asked as the API descriptions
 * ask (describeAccess), and the functions the function allow-list lets it call. Built once; asked
 * only when an error is answered.
 */
import type { CallerAccess } from './describe/caller-access';
import type { NameVisibility } from './errors/name-hint';
import type { Identity } from './pipeline/identity';
import type { DbFunction, Table } from './schema/schema-types';
import type { FunctionAllowList } from './stages/allow-list/function-allow-list';
import type { AccessPolicy } from './stages/policy/access-policy';
import { describeAccess } from './stages/policy/describe-access';
import type { LegacyPolicy } from './stages/policy/legacy-policy';

export function createNameVisibility(policies: { access?: AccessPolicy | undefined; legacy?: LegacyPolicy | undefined }, functions: FunctionAllowList | undefined): (identity: Identity) => NameVisibility {
  const callable = (fn: DbFunction): boolean => functions === undefined || functions.allows(fn);
  return (identity) => {
    const access: CallerAccess = describeAccess(policies, identity);
    return Object.freeze({
      readable: (table: Table, column?: string) => {
        const granted = access(table);
        return granted !== null && (column === undefined || granted.readable(column));
      },
      callable,
    });
  };
}

/**
 * A table the schema cache has not loaded yet, as the policies see it: only its name (a policy
 * that filters on a column finds none, and so does not let it be read).
 */
export function unloadedTable(name: string): Table {
  return Object.freeze({
    schema: '', name, kind: 'r', oid: 0, columns: [], columnsByName: new Map(), primaryKey: [], uniqueKeys: [], foreignKeys: [], referencedBy: [], rlsEnabled: false, rlsForced: false,
  });
}
