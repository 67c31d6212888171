/**
 * RpcCommand / ContractsCommand + Result -> 200 and the contract §3 bodies.
 * A call's JSON comes from PostgreSQL as text and is spliced in as is (numbers stay exact).
 */
import type { ContractsCommand, RpcCommand } from '../command/command';
import type { DbFunction } from '../schema/schema-types';
import type { Result } from '../stages/stage-types';
import type { Rendered } from './render-result';

export function renderRpc(command: RpcCommand, result: Result): Rendered {
  const value = command.fn.returns === 'void' ? null : (result.rows[0]?.[0] ?? null);
  return { status: 200, body: `{"data":${value ?? 'null'}}` };
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
