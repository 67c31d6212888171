/**
 * The legacy route policy (`policy` / `policy_path`, YAML; docs/access-policy.md,
 * "Legacy YAML route policy"), validated and frozen:
 *
 *   policies:
 *     - name: members see their own orders
 *       table: orders            # or "*"
 *       role: member             # absent or "*": any role
 *       operations: [read, update]
 *       filter: user_id = $user_id and tenant_id = $tenant_id
 *       allowed_columns: [id, status, total, user_id, tenant_id]
 *
 * A `filter` is one or more `<column> = $<variable>` joined by `and`; the variables are
 * $tenant_id, $user_id, $role, $agent_id and any other claim of the token ($<claim>). Values are
 * always bound as parameters, never written into SQL. Unknown keys are errors, not ignored.
 */
import Ajv from 'ajv';
import { GatewayConfigError } from '../../errors/gateway-config-error';
import { describeSchemaErrors } from './describe-schema-errors';
import { type Operation, operations } from './access-policy';

/** One `<column> = $<variable>` condition. */
export interface LegacyCondition {
  readonly column: string;
  readonly variable: string;
}

export interface LegacyEntry {
  readonly name: string;
  readonly table: string;
  /** '*' when any role. */
  readonly role: string;
  readonly operations: ReadonlySet<Operation>;
  readonly filter: readonly LegacyCondition[];
  /** Undefined: every column. */
  readonly allowedColumns: ReadonlySet<string> | undefined;
}

export interface LegacyPolicy {
  readonly entries: readonly LegacyEntry[];
  readonly source: string;
}

const schema = {
  type: 'object',
  required: ['policies'],
  properties: {
    policies: {
      type: 'array',
      items: {
        type: 'object',
        required: ['table', 'operations'],
        properties: {
          name: { type: 'string' },
          table: { type: 'string', minLength: 1 },
          role: { type: 'string', minLength: 1 },
          operations: { type: 'array', items: { enum: operations }, uniqueItems: true },
          filter: { type: 'string', minLength: 1 },
          allowed_columns: { type: 'array', items: { type: 'string', minLength: 1 } },
        },
        additionalProperties: false,
      },
    },
  },
  additionalProperties: false,
} as const;

const validate = new Ajv({ allErrors: true }).compile(schema);

// A column (bare identifier or double-quoted) = $variable.
const CONDITION = /^\s*(?:([A-Za-z_][A-Za-z0-9_$]*)|"((?:[^"]|"")+)")\s*=\s*\$([A-Za-z_][A-Za-z0-9_]*)\s*$/;

export function toLegacyPolicy(document: unknown, source: string): LegacyPolicy {
  if (!validate(document)) throw new GatewayConfigError(`legacy policy ${source} is invalid: ${describeSchemaErrors(validate.errors)}`, 'policy');
  const raw = (document as { policies: RawEntry[] }).policies;
  const entries = raw.map((entry, i): LegacyEntry => {
    const name = entry.name ?? `policies[${i}]`;
    return Object.freeze({
      name,
      table: entry.table,
      role: entry.role ?? '*',
      operations: new Set(entry.operations),
      filter: Object.freeze(entry.filter === undefined ? [] : parseFilter(entry.filter, name, source)),
      allowedColumns: entry.allowed_columns === undefined ? undefined : new Set(entry.allowed_columns),
    });
  });
  return Object.freeze({ entries: Object.freeze(entries), source });
}

interface RawEntry {
  name?: string;
  table: string;
  role?: string;
  operations: Operation[];
  filter?: string;
  allowed_columns?: string[];
}

function parseFilter(text: string, name: string, source: string): LegacyCondition[] {
  return text.split(/\s+and\s+/i).map((part) => {
    const match = CONDITION.exec(part);
    if (match === null) {
      throw new GatewayConfigError(`legacy policy ${source}, entry "${name}": the filter must be \`<column> = $<variable>\` conditions joined by \`and\``, 'policy');
    }
    return Object.freeze({ column: match[1] ?? match[2]!.replace(/""/g, '"'), variable: match[3]! });
  });
}
