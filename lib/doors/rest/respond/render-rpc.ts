/**
 * RpcCommand / ContractsCommand + Result -> 200 and the bodies of docs/rpc.md ("The response", "`GET /_rpc/contracts`").
 * A call's JSON comes from PostgreSQL as text and is spliced in as is (numbers stay exact).
 */
import type { ContractsCommand, RpcCommand } from '../../../command/command';
import { binaryToJson } from '../../../db/binary/binary-to-json';
import type { DbFunction } from '../../../schema/schema-types';
import type { BinaryCallShape, CallShape } from '../../../pipeline/plan';
import type { Result } from '../../../pipeline/result';
import type { Rendered } from './rendered';

export function renderRpc(command: RpcCommand, shape: CallShape | BinaryCallShape, result: Result): Rendered {
  if (shape.kind === 'binary-call') {
    if (!result.binary) throw new Error('a binary-result call returned no binary rows');
    return { status: 200, body: `{"data":${renderBinary(command, shape, result.binary)}}` };
  }
  const value = command.fn.returns === 'void' ? null : (result.rows[0]?.[shape.value] ?? null);
  return { status: 200, body: `{"data":${value ?? 'null'}}` };
}

/**
 * Binary results -> the same JSON as the text path: each field decoded as to_json would render
 * it (timestamptz in the session TimeZone, the column the shape names), rows as objects keyed by
 * the function's result columns, sets as arrays.
 */
function renderBinary(command: RpcCommand, shape: BinaryCallShape, binary: NonNullable<Result['binary']>): string {
  const { fn } = command;
  const { fields, rows } = binary;
  const timeZone = rows[0]?.[shape.timeZone]?.toString('utf8') ?? 'UTC';
  const value = (row: readonly (Buffer | null)[], i: number): string => binaryToJson(fields[i]!.typeOid, row[i] ?? null, { timeZone });
  const keys = fn.resultColumns.map((c) => JSON.stringify(c.name));
  if (!fn.returnsSet) return rows[0] === undefined ? 'null' : value(rows[0], 0); // a scalar, or one row as json
  const render = (row: readonly (Buffer | null)[]): string => (fn.returns === 'row' ? `{${keys.map((k, i) => `${k}:${value(row, i)}`).join(',')}}` : value(row, 0));
  return `[${rows.map(render).join(',')}]`;
}

export function renderContracts(command: ContractsCommand): Rendered {
  return { status: 200, body: JSON.stringify({ data: command.functions.map(contractOf) }) };
}

/** One entry of GET /_rpc/contracts, for typed client generation. */
function contractOf(fn: DbFunction): object {
  return {
    schema: fn.schema,
    name: fn.name,
    identity_args: fn.identityArgs,
    args: fn.args.map((a) => ({ name: a.name, type: a.type, has_default: a.hasDefault, variadic: a.variadic })),
    defaults: fn.defaults,
    variadic: fn.variadic,
    return_type: fn.returnType,
    returns_set: fn.returnsSet,
    ...(fn.returns === 'row' ? { columns: fn.resultColumns.map((c) => ({ name: c.name, type: c.type })) } : {}),
    volatility: ({ i: 'immutable', s: 'stable', v: 'volatile' } as const)[fn.volatility],
  };
}
