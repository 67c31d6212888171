/**
 * A change feed event as realtime-js reads a `postgres_changes` message's `data`
 * (docs/postgrest-dialect.md, "Realtime"): `{ schema, table, commit_timestamp, type, columns,
 * record, old_record, errors }`. `record` is the row as the list route renders it for the
 * subscriber (JSON values: realtime-js's conversions leave them as they are); `old_record` holds
 * the key only. `columns` names the row's own columns, never one the subscriber may not read.
 * Made once per group and batch, not per subscriber.
 */
import type { FeedEvent } from '../../pipeline/change-subscription';
import type { Table } from '../../schema/schema-types';
import { splitJsonObject } from '../shared/split-json-object';

const eventTypes = { insert: 'INSERT', update: 'UPDATE', delete: 'DELETE' } as const;

/** The `data` text of each event, in order. */
export function changeData(table: Table, events: readonly FeedEvent[]): string[] {
  const head = `"schema":${JSON.stringify(table.schema)},"table":${JSON.stringify(table.name)}`;
  let columns: string | undefined;
  const out: string[] = [];
  for (const e of events) {
    const row = e.row ?? '{}';
    if (e.row !== undefined && columns === undefined) columns = columnsOf(table, e.row);
    const cols = e.row !== undefined ? columns! : columnsOf(table, e.key);
    const old = e.event === 'insert' ? '{}' : e.key;
    out.push(`{${head},"commit_timestamp":${JSON.stringify(new Date(e.commitTime).toISOString())},"type":"${eventTypes[e.event]}","columns":${cols},"record":${row},"old_record":${old},"errors":null}`);
  }
  return out;
}

/** `[{ name, type }]` of the columns a row's object has, typed as realtime-js names types. */
function columnsOf(table: Table, objectText: string): string {
  return `[${splitJsonObject(objectText)
    .map(([name]) => `{"name":${JSON.stringify(name)},"type":${JSON.stringify(typeName(table, name))}}`)
    .join(',')}]`;
}

/** PostgreSQL's short type names, as Supabase sends them (realtime-js converts by them). */
const shortNames: ReadonlyMap<number, string> = new Map([
  [16, 'bool'],
  [20, 'int8'],
  [21, 'int2'],
  [23, 'int4'],
  [25, 'text'],
  [114, 'json'],
  [700, 'float4'],
  [701, 'float8'],
  [1043, 'varchar'],
  [1082, 'date'],
  [1114, 'timestamp'],
  [1184, 'timestamptz'],
  [1700, 'numeric'],
  [2950, 'uuid'],
  [3802, 'jsonb'],
]);

function typeName(table: Table, name: string): string {
  const column = table.columnsByName.get(name);
  if (column === undefined) return 'text';
  return shortNames.get(column.typeOid) ?? column.type;
}
