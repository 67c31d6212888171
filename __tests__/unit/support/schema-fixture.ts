/** A hand-made schema cache for unit tests of parse and compile (no database). */
import type { Column, SchemaCache, Table } from '../../../lib/schema/schema-types';

type ColumnSpec = [name: string, type: string, extra?: Partial<Column>];

const categories: Record<string, string> = { text: 'S', 'character varying': 'S', integer: 'N', bigint: 'N', 'numeric(12,2)': 'N', boolean: 'B', 'timestamp with time zone': 'D', uuid: 'U', jsonb: 'U', json: 'U', 'text[]': 'A' };

export function makeTable(name: string, specs: ColumnSpec[], primaryKey: string[], schema = 'public'): Table {
  const columns: Column[] = specs.map(([colName, type, extra], i) => ({
    name: colName,
    position: i + 1,
    type,
    typeOid: 0,
    category: categories[type] ?? 'U',
    elementType: type.endsWith('[]') ? type.slice(0, -2) : null,
    nullable: !primaryKey.includes(colName),
    hasDefault: false,
    identity: '',
    generated: false,
    compareType: type.replace(/\(.*\)/, ''),
    compareElementType: type.endsWith('[]') ? type.slice(0, -2) : null,
    compareListType: type.endsWith('[]') ? null : `${type.replace(/\(.*\)/, '')}[]`,
    ...extra,
  }));
  const byName = new Map(columns.map((c) => [c.name, c]));
  const pk = primaryKey.map((n) => byName.get(n)!);
  return {
    schema,
    name,
    kind: 'r',
    oid: 0,
    columns,
    columnsByName: byName,
    primaryKey: pk,
    uniqueKeys: pk.length ? [{ name: `${name}_pkey`, columns: pk, primary: true }] : [],
    foreignKeys: [],
    referencedBy: [],
    rlsEnabled: true,
    rlsForced: true,
  };
}

export function makeSchema(tables: Table[]): SchemaCache {
  return { schemas: ['public'], tables, tablesByName: new Map(tables.map((t) => [t.name, t])), functions: [], loadedAt: new Date(0) };
}

export const orders = makeTable(
  'orders',
  [
    ['id', 'bigint'],
    ['tenant_id', 'uuid'],
    ['status', 'text'],
    ['total', 'numeric(12,2)'],
    ['notes', 'text'],
    ['placed_at', 'timestamp with time zone', { nullable: false }],
    ['tags', 'text[]'],
    ['payload', 'json'],
    ['limit', 'integer'],
  ],
  ['id'],
);
export const orderTags = makeTable('order_tags', [['order_id', 'bigint'], ['tag', 'text']], ['order_id', 'tag']);
export const auditLog = makeTable('audit_log', [['at', 'timestamp with time zone'], ['message', 'text']], []);
export const weird = makeTable('we"ird table', [['id', 'integer'], ['select', 'text'], ['a"b', 'text'], ['col with space', 'text'], ['naïve_ünïcode', 'text']], ['id']);
export const schema = makeSchema([orders, orderTags, auditLog, weird]);
