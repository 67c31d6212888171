/**
 * `POST /rpc/{function}` -> RpcCommand; `GET /_rpc/contracts` -> ContractsCommand.
 * In: the function name, the body (docs/rpc.md, "The body": an object is named arguments,
 * an array positional ones, a scalar or null one positional argument, no body none) and the
 * `x-gw-result-format` header. Out: one overload and the argument values as JSON text keyed by
 * argument, bound as one parameter. Never: parses values into JS numbers for SQL, or lets a name
 * through that is not a discovered function of an exposed schema.
 */
import type { ContractsCommand, RpcArgument, RpcCommand } from '../../../command/command';
import type { ResolvedConfig } from '../../../pipeline/resolved-config';
import { GatewayError } from '../../../errors/gateway-error';
import type { GatewayRequest } from '../../../pipeline/gateway-request';
import type { SchemaCache } from '../../../schema/schema-types';
import { type Call, chooseOverload } from '../../shared/choose-overload';
import { parseJsonBody } from '../../shared/parse-json-body';
import { resolveFunction } from './resolve-function';
import { splitJsonArray } from '../../shared/split-json-array';

export function parseRpc(schema: SchemaCache, name: string, request: GatewayRequest, config: ResolvedConfig): RpcCommand {
  const overloads = resolveFunction(schema, name, config.rpcRequireSchemaQualified);
  const resultFormat = parseResultFormat(request.headers['x-gw-result-format']);
  // A body read as bytes (application/octet-stream) is a body too: refused as not JSON (415), never a call without arguments.
  const hasBody = request.bodyBytes !== undefined || (request.body !== undefined && request.body.trim() !== '');
  const body = hasBody ? parseJsonBody(request) : undefined;
  const value = body?.value;

  if (body !== undefined && typeof value === 'object' && value !== null && !Array.isArray(value)) {
    const values = value as Record<string, unknown>;
    const fit = chooseOverload(overloads, { notation: 'named', values }, config.rpcSignatureCheck);
    const args = fit.args.map((arg): RpcArgument => ({ arg, key: arg.name }));
    return Object.freeze({ kind: 'rpc', fn: fit.fn, notation: 'named', args: Object.freeze(args), values: body.text, resultFormat });
  }

  // Positional: the element texts as received, so that numbers stay exact.
  const texts = body === undefined ? [] : Array.isArray(value) ? splitJsonArray(body.text) : [body.text.trim()];
  const call: Call = { notation: 'positional', values: body === undefined ? [] : Array.isArray(value) ? value : [value] };
  const fit = chooseOverload(overloads, call, config.rpcSignatureCheck);
  const args: RpcArgument[] = [];
  const entries: string[] = [];
  fit.args.forEach((arg, i) => {
    const key = String(i + 1);
    args.push({ arg, key });
    // A VARIADIC argument takes every remaining value, as one JSON array.
    const text = arg.variadic ? `[${texts.slice(i).join(',')}]` : texts[i];
    entries.push(`${JSON.stringify(key)}:${text}`);
  });
  return Object.freeze({ kind: 'rpc', fn: fit.fn, notation: 'positional', args: Object.freeze(args), values: `{${entries.join(',')}}`, resultFormat });
}

export function parseContracts(schema: SchemaCache): ContractsCommand {
  return Object.freeze({ kind: 'contracts', functions: Object.freeze(schema.functions.filter((f) => f.executable)) });
}

function parseResultFormat(header: string | undefined): RpcCommand['resultFormat'] {
  const value = header?.trim().toLowerCase();
  if (value === undefined || value === '' || value === 'text') return 'text';
  if (value === 'binary') return 'binary';
  throw new GatewayError('PARSE_ERROR', `The header x-gw-result-format must be \`text\` or \`binary\`, not \`${header!.slice(0, 32)}\`.`, {
    details: { header: 'x-gw-result-format' },
  });
}
