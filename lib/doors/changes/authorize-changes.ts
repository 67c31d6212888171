/**
 * Which of a batch's changes one subscription group may see (docs/change-feed.md,
 * "Authorization"), decided by the database under the group's identity: the group's own list
 * request (its filters and `select`, parsed by the list route's parse stage) narrowed to the
 * changed rows' keys (`{key}=in.(...)`), through the policy, compile and execute stages. One
 * statement per group per batch (per `in_items` keys), whatever the number of subscribers in the
 * group or of changes in the batch. Rows come back rendered as the list route renders them.
 *
 * - insert, update: sent when the row is in the answer (as it is now: the latest committed
 *   version); an update whose row is not is a `delete` of its key (the row left the view) for
 *   subscribers of the tenant named in the old row's tenant column, and nothing for others.
 * - delete: sent, as its key only, to subscribers of the tenant named in the old row's tenant
 *   column; a table without `tenant_column` (or a delete without the old row's tenant: no
 *   REPLICA IDENTITY FULL) sends no deletes to anyone.
 * Never: sends a row, a column or a key the group's list would not show.
 */
import type { Column, Table } from '../../schema/schema-types';
import type { Identity } from '../../pipeline/identity';
import type { GatewayRequest } from '../../pipeline/gateway-request';
import type { FeedEvent } from '../../pipeline/change-subscription';
import type { BaseContext, Stages } from '../../pipeline/stage-types';
import { GatewayError } from '../../errors/gateway-error';
import { splitJsonArray } from '../shared/split-json-array';
import { splitJsonObject } from '../shared/split-json-object';
import { quotedList } from '../shared/split-list';
import type { RowChange } from './change-source';

/** What every subscriber of a group shares: it decides what they may see. */
export interface GroupShape {
  readonly table: Table;
  /** The route segment the subscribers wrote for the table. */
  readonly segment: string;
  /** The single primary-key column: events are matched to rows by it. */
  readonly key: Column;
  /** The list request's query: the subscription's filters, and `select` with the key added. */
  readonly query: readonly (readonly [string, string])[];
  /** The key was added to `select` for matching only: it is taken out of each row. */
  readonly stripKey: boolean;
  readonly identity: Identity;
  /** The table's tenant column (change_feed.tenant_column), when it has one. */
  readonly tenantColumn: string | undefined;
}

export interface CheckParts {
  readonly stages: Pick<Stages, 'parse' | 'policy' | 'compile' | 'execute'>;
  /** The base context of a check: config, the current schema, the primary's Database. */
  base(request: GatewayRequest): BaseContext;
  /** Called once per statement run (the metric and the benchmark count them). */
  readonly counted: () => void;
  /** Most keys in one statement (`in_items` and max_limit). */
  readonly maxKeys: number;
}

/** Integer keys are JSON numbers in the list's rows; every other supported key type a string. */
const numericKeyTypes: ReadonlySet<number> = new Set([20, 21, 23]);
/** Key types whose JSON text and WAL text name the same value (int2, int4, int8, text, varchar, uuid). */
export const feedKeyTypes: ReadonlySet<number> = new Set([20, 21, 23, 25, 1043, 2950]);

export async function authorizeChanges(parts: CheckParts, group: GroupShape, changes: readonly RowChange[], requestId: string): Promise<FeedEvent[]> {
  const keyName = group.key.name;
  const wanted: string[] = [];
  const seen = new Set<string>();
  for (const c of changes) {
    if (c.op === 'delete') continue;
    const key = valueOf(c, c.row, keyName) ?? valueOf(c, c.old, keyName);
    if (typeof key === 'string' && !seen.has(key)) {
      seen.add(key);
      wanted.push(key);
    }
  }
  const visible = new Map<string, string>();
  for (let i = 0; i < wanted.length; i += parts.maxKeys) {
    await readRows(parts, group, wanted.slice(i, i + parts.maxKeys), visible, requestId);
  }
  const table = JSON.stringify(group.table.name);
  const events: FeedEvent[] = [];
  for (const c of changes) {
    if (c.op !== 'delete') {
      const key = valueOf(c, c.row, keyName) ?? valueOf(c, c.old, keyName);
      const row = typeof key === 'string' ? visible.get(key) : undefined;
      if (row !== undefined) {
        events.push({ id: c.id, event: c.op, data: `{"op":"${c.op}","table":${table},"row":${row}}`, row, key: `{${JSON.stringify(keyName)}:${keyJson(group.key, key as string)}}`, commitTime: c.commitTime });
        continue;
      }
      if (c.op === 'insert') continue;
    }
    // A delete, or an update the group cannot see (now): its key, to the old row's tenant only.
    if (group.tenantColumn === undefined || group.identity.tenantId === '') continue;
    if (valueOf(c, c.old, group.tenantColumn) !== group.identity.tenantId) continue;
    const key = valueOf(c, c.old, keyName) ?? valueOf(c, c.row, keyName);
    if (typeof key !== 'string') continue;
    const keyText = `{${JSON.stringify(keyName)}:${keyJson(group.key, key)}}`;
    events.push({ id: c.id, event: 'delete', data: `{"op":"delete","table":${table},"key":${keyText}}`, row: undefined, key: keyText, commitTime: c.commitTime });
  }
  return events;
}

/** The list statement over `keys`, as the group's identity; adds each visible row to `visible` by key. */
async function readRows(parts: CheckParts, group: GroupShape, keys: readonly string[], visible: Map<string, string>, requestId: string): Promise<void> {
  const list = quotedList(keys);
  const request: GatewayRequest = Object.freeze({
    id: requestId,
    method: 'GET',
    segments: [group.segment],
    rawSegments: [group.segment],
    query: [...group.query, [group.key.name, `in.(${list})`], ['limit', String(keys.length)]] as const,
    headers: {},
    body: undefined,
    loopback: false,
  });
  const ctx = { ...parts.base(request), identity: group.identity };
  const { stages } = parts;
  const command = await stages.policy({ ...ctx, command: await stages.parse(ctx) });
  const plan = await stages.compile({ ...ctx, command });
  if (plan.shape.kind !== 'list') throw new GatewayError('INTERNAL_ERROR', 'A change feed check did not compile to a list.');
  parts.counted();
  const result = await stages.execute({ ...ctx, command, plan });
  const data = result.rows[0]?.[plan.shape.data] ?? '[]';
  for (const rowText of splitJsonArray(data)) {
    const entries = splitJsonObject(rowText);
    const keyText = entries.find(([k]) => k === group.key.name)?.[1];
    if (keyText === undefined) continue;
    const key = keyText.startsWith('"') ? (JSON.parse(keyText) as string) : keyText;
    visible.set(key, group.stripKey ? `{${entries.filter(([k]) => k !== group.key.name).map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',')}}` : rowText);
  }
}

/** A column's text in a tuple of the change; undefined when the tuple or the value is absent. */
function valueOf(change: RowChange, tuple: RowChange['row'], column: string): string | null | undefined {
  if (tuple === null) return undefined;
  const i = change.columns.indexOf(column);
  return i < 0 ? undefined : tuple[i];
}

function keyJson(column: Column, text: string): string {
  return numericKeyTypes.has(column.typeOid) ? text : JSON.stringify(text);
}
