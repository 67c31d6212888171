/**
 * chooseOverload: the overloads of one name + the call's arguments -> the one to call.
 *
 * A JSON value has no PostgreSQL type, so the gateway picks the overload and then converts each
 * value to that overload's declared argument type (jsonb_to_record, in compile). The rules follow
 * PostgreSQL's own resolution where a JSON body can express it:
 *   1. Shape: a named call fits when every key names an input argument and every argument left out
 *      has a default; a positional call fits when the values fill the arguments in order, the rest
 *      having defaults, extra values going to a VARIADIC argument.
 *   2. Types: among the fitting overloads, each value votes for the arguments of its JSON type's
 *      preferred category (number -> numeric, string -> string, boolean -> boolean, array -> array
 *      or json, object -> composite or json); the overload with the most votes wins. A tie is
 *      ambiguous: 400 RPC_SIGNATURE_MISMATCH listing the signatures, never a guess.
 * No fit: 400 RPC_SIGNATURE_MISMATCH under `rpc_signature_check`, else 404 as PostgreSQL's
 * "function does not exist" would be.
 */
import { GatewayError } from '../../errors/gateway-error';
import type { DbFunction, FunctionArg } from '../../schema/schema-types';
import { clip } from './resolve-names';

export type Call = { readonly notation: 'named'; readonly values: Readonly<Record<string, unknown>> } | { readonly notation: 'positional'; readonly values: readonly unknown[] };

/** Which argument each value goes to: by name, or positions (the last may be VARIADIC, taking the rest). */
export interface Fit {
  readonly fn: DbFunction;
  /** Named: the arguments given, in declaration order. Positional: one per value, the variadic one once. */
  readonly args: readonly FunctionArg[];
}

export function chooseOverload(overloads: readonly DbFunction[], call: Call, signatureCheck: boolean): Fit {
  const fits = overloads.map((fn) => fitOf(fn, call)).filter((f): f is Fit => f !== undefined);
  if (fits.length === 1) return fits[0]!;
  const signatures = overloads.map((f) => `${f.schema}.${f.name}(${f.identityArgs})`);
  const first = overloads[0]!;
  if (fits.length === 0) {
    const unknown = call.notation === 'named' ? Object.keys(call.values).filter((k) => !overloads.some((f) => f.args.some((a) => a.name === k))) : [];
    const message =
      unknown.length > 0
        ? `Function \`${first.schema}.${first.name}\` has no argument named ${unknown.map((k) => `\`${clip(k)}\``).join(', ')}.`
        : `No overload of \`${first.schema}.${first.name}\` takes ${describeCall(call)}.`;
    const details = { signatures, ...(unknown.length > 0 ? { unknown_arguments: unknown.map((k) => clip(k)) } : {}) };
    const hint = `Signatures: ${signatures.join('; ')}.`;
    throw signatureCheck ? new GatewayError('RPC_SIGNATURE_MISMATCH', message, { details, hint }) : new GatewayError('NOT_FOUND', message, { details, hint });
  }
  const scored = fits.map((fit) => ({ fit, score: scoreOf(fit, call) }));
  const best = Math.max(...scored.map((s) => s.score));
  const winners = scored.filter((s) => s.score === best);
  if (winners.length === 1) return winners[0]!.fit;
  throw new GatewayError('RPC_SIGNATURE_MISMATCH', `The call matches several overloads of \`${first.schema}.${first.name}\`; the JSON values do not tell them apart.`, {
    details: { signatures: winners.map((w) => `${w.fit.fn.schema}.${w.fit.fn.name}(${w.fit.fn.identityArgs})`) },
    hint: 'Pass the arguments by name, or with JSON types that match one signature (a number for integer, a string for text).',
  });
}

function fitOf(fn: DbFunction, call: Call): Fit | undefined {
  if (call.notation === 'named') {
    const keys = Object.keys(call.values);
    if (!keys.every((k) => k !== '' && fn.args.some((a) => a.name === k))) return undefined;
    if (!fn.args.every((a) => a.hasDefault || keys.includes(a.name))) return undefined;
    return { fn, args: fn.args.filter((a) => keys.includes(a.name)) };
  }
  const n = call.values.length;
  const variadic = fn.variadic ? fn.args[fn.args.length - 1] : undefined;
  const fixed = variadic ? fn.args.slice(0, -1) : fn.args;
  if (n <= fixed.length) {
    // The values fill a prefix; everything after (the variadic argument too) needs a default.
    if (!fn.args.slice(n).every((a) => a.hasDefault)) return undefined;
    return { fn, args: fixed.slice(0, n) };
  }
  if (!variadic) return undefined;
  return { fn, args: [...fixed, variadic] };
}

function scoreOf(fit: Fit, call: Call): number {
  let score = 0;
  fit.args.forEach((arg, i) => {
    if (call.notation === 'named') score += votes(call.values[arg.name], arg, false);
    else if (arg.variadic) for (const v of call.values.slice(i)) score += votes(v, arg, true);
    else score += votes(call.values[i], arg, false);
  });
  return score;
}

/** 1 when the value's JSON type is the preferred one for the argument's type category. */
function votes(value: unknown, arg: FunctionArg, element: boolean): number {
  // A spread variadic value is one element of the array argument; its category is the element's,
  // which the catalog row does not carry: a scalar element is fine, a nested array is not.
  if (element) return value !== null && typeof value !== 'object' ? 1 : 0;
  const json = arg.type === 'json' || arg.type === 'jsonb';
  if (value === null) return 0;
  if (typeof value === 'number') return arg.category === 'N' ? 1 : 0;
  if (typeof value === 'boolean') return arg.category === 'B' ? 1 : 0;
  if (typeof value === 'string') return arg.category === 'S' ? 1 : 0;
  if (Array.isArray(value)) return arg.category === 'A' || json ? 1 : 0;
  return arg.category === 'C' || json ? 1 : 0;
}

function describeCall(call: Call): string {
  if (call.notation === 'named') {
    const keys = Object.keys(call.values);
    return keys.length === 0 ? 'no arguments' : `the arguments ${keys.map((k) => `\`${clip(k)}\``).join(', ')}`;
  }
  return call.values.length === 0 ? 'no arguments' : `${call.values.length} positional argument${call.values.length === 1 ? '' : 's'}`;
}
