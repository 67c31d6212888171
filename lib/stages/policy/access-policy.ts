/**
 * The native access policy (docs/access-policy.md), validated and
 * frozen: `default_decision`, and per table (`"*"` is the fallback rule) the operations, the
 * readable, writable and returnable columns (`{ only = [...] }` whitelist or `{ except = [...] }`
 * blacklist), `require_any_role` and `require_scopes` (all of them).
 *
 * Fail closed: every key is validated (an unknown key is an error, not ignored), `operations` is
 * required in each rule (a rule that forgot it would otherwise have to guess), and
 * `default_decision` defaults to `deny`.
 */
import Ajv from 'ajv';
import { GatewayConfigError } from '../../errors/gateway-config-error';
import { describeSchemaErrors } from './describe-schema-errors';

export type Operation = 'read' | 'create' | 'update' | 'delete';
export const operations: readonly Operation[] = ['read', 'create', 'update', 'delete'];

/** A column set: everything, only these, or all but these. */
export type ColumnSet = { readonly kind: 'all' } | { readonly kind: 'only'; readonly names: ReadonlySet<string> } | { readonly kind: 'except'; readonly names: ReadonlySet<string> };

export interface AccessRule {
  /** The key it came from: a table name or "*". */
  readonly table: string;
  readonly operations: ReadonlySet<Operation>;
  readonly read: ColumnSet;
  readonly write: ColumnSet;
  readonly returning: ColumnSet;
  /** Empty: any role. */
  readonly anyRole: readonly string[];
  readonly scopes: readonly string[];
}

export interface AccessPolicy {
  readonly defaultDecision: 'allow' | 'deny';
  /** Rules by table name; "*" is the fallback. */
  readonly rules: ReadonlyMap<string, AccessRule>;
  /** Where it came from, for messages. */
  readonly source: string;
}

/** Every column. */
export const ALL_COLUMNS: ColumnSet = Object.freeze({ kind: 'all' });

const columnSet = {
  type: 'object',
  minProperties: 1,
  maxProperties: 1,
  properties: { only: { type: 'array', items: { type: 'string', minLength: 1 } }, except: { type: 'array', items: { type: 'string', minLength: 1 } } },
  additionalProperties: false,
} as const;

const schema = {
  type: 'object',
  properties: {
    default_decision: { enum: ['deny', 'allow'] },
    tables: {
      type: 'object',
      additionalProperties: {
        type: 'object',
        required: ['operations'],
        properties: {
          operations: { type: 'array', items: { enum: operations }, uniqueItems: true },
          read_columns: columnSet,
          write_columns: columnSet,
          returning_columns: columnSet,
          require_any_role: { type: 'array', items: { type: 'string', minLength: 1 } },
          require_scopes: { type: 'array', items: { type: 'string', minLength: 1 } },
        },
        additionalProperties: false,
      },
    },
  },
  additionalProperties: false,
} as const;

const validate = new Ajv({ allErrors: true }).compile(schema);

export function toAccessPolicy(document: unknown, source: string): AccessPolicy {
  if (!validate(document)) throw new GatewayConfigError(`access policy ${source} is invalid: ${describeSchemaErrors(validate.errors)}`, 'access');
  const doc = document as { default_decision?: 'allow' | 'deny'; tables?: Record<string, RawRule> };
  const rules = new Map<string, AccessRule>();
  for (const [table, raw] of Object.entries(doc.tables ?? {})) {
    rules.set(
      table,
      Object.freeze({
        table,
        operations: new Set(raw.operations),
        read: toColumnSet(raw.read_columns),
        write: toColumnSet(raw.write_columns),
        returning: toColumnSet(raw.returning_columns),
        anyRole: Object.freeze([...(raw.require_any_role ?? [])]),
        scopes: Object.freeze([...(raw.require_scopes ?? [])]),
      }),
    );
  }
  return Object.freeze({ defaultDecision: doc.default_decision ?? 'deny', rules, source });
}

interface RawRule {
  operations: Operation[];
  read_columns?: { only?: string[]; except?: string[] };
  write_columns?: { only?: string[]; except?: string[] };
  returning_columns?: { only?: string[]; except?: string[] };
  require_any_role?: string[];
  require_scopes?: string[];
}

function toColumnSet(raw: { only?: string[]; except?: string[] } | undefined): ColumnSet {
  if (raw === undefined) return ALL_COLUMNS;
  if (raw.only !== undefined) return Object.freeze({ kind: 'only', names: new Set(raw.only) });
  return Object.freeze({ kind: 'except', names: new Set(raw.except ?? []) });
}

export function allows(set: ColumnSet, column: string): boolean {
  return set.kind === 'all' || (set.kind === 'only' ? set.names.has(column) : !set.names.has(column));
}

/** The rule of a table: its own, else "*", else undefined (the default decision applies). */
export function ruleFor(policy: AccessPolicy, table: string): AccessRule | undefined {
  return policy.rules.get(table) ?? policy.rules.get('*');
}
