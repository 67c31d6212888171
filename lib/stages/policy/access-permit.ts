/**
 * The native [access] policy as a Permit: the table's rule (or "*"), checked for the operation,
 * the role and the scopes; no rule and `default_decision = "allow"` grants everything.
 */
import type { Identity } from '../../pipeline/identity';
import { ALL_COLUMNS, type AccessPolicy, ruleFor } from './access-policy';
import { forbidden, type Grant, type Permit } from './enforce-policy';

const EVERYTHING: Grant = Object.freeze({ read: ALL_COLUMNS, write: ALL_COLUMNS, returning: ALL_COLUMNS, rows: Object.freeze([]) });

export function accessPermit(policy: AccessPolicy, identity: Identity): Permit {
  return (table, operation) => {
    const rule = ruleFor(policy, table.name);
    if (rule === undefined) {
      if (policy.defaultDecision === 'allow') return EVERYTHING;
      throw forbidden(`The access policy has no rule for \`${table.name}\` (default_decision = deny).`, { table: table.name, operation });
    }
    if (!rule.operations.has(operation)) {
      throw forbidden(`The access policy does not permit \`${operation}\` on \`${table.name}\`.`, { table: table.name, operation });
    }
    if (rule.anyRole.length > 0 && !rule.anyRole.includes(identity.role)) {
      throw forbidden(`\`${operation}\` on \`${table.name}\` needs one of the roles ${rule.anyRole.join(', ')}.`, { table: table.name, operation });
    }
    const missing = rule.scopes.filter((s) => !identity.scopes.includes(s));
    if (missing.length > 0) {
      throw forbidden(`\`${operation}\` on \`${table.name}\` needs the scopes ${missing.join(', ')}.`, { table: table.name, operation, missing_scopes: missing });
    }
    return { read: rule.read, write: rule.write, returning: rule.returning, rows: [] };
  };
}
