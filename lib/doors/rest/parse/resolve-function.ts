/**
 * resolveFunction: the `{function}` of `/rpc/{function}` -> the overloads it names.
 * `schema.function` looks in that schema only (it must be exposed); a bare name resolves through
 * the configured `schemas` in order (docs/rpc.md, "Name resolution"), the first schema that has it winning, as a
 * search_path would. Unknown -> 404 with the nearest name; a bare name while
 * `rpc_require_schema_qualified` -> 400 RPC_NAME_NOT_QUALIFIED.
 */
import { GatewayError } from '../../../errors/gateway-error';
import { type NameVisibility, suggestName } from '../../../errors/name-hint';
import type { DbFunction, SchemaCache } from '../../../schema/schema-types';
import { clip } from '../../shared/resolve-names';

export function resolveFunction(schema: SchemaCache, name: string, requireQualified: boolean): readonly DbFunction[] {
  const dot = name.indexOf('.');
  // The exposed schema the name starts with; the longest wins, since a schema name may itself hold a dot.
  const qualifier = schema.schemas.filter((s) => name.startsWith(`${s}.`)).sort((a, b) => b.length - a.length)[0];
  if (qualifier !== undefined) {
    const [inSchema, fnName] = [qualifier, name.slice(qualifier.length + 1)];
    const found = schema.functions.filter((f) => f.schema === inSchema && f.name === fnName);
    if (found.length > 0) return found;
    throw notFound(schema, name);
  }
  for (const inSchema of schema.schemas) {
    const found = schema.functions.filter((f) => f.schema === inSchema && f.name === name);
    if (found.length === 0) continue;
    if (requireQualified) {
      throw new GatewayError('RPC_NAME_NOT_QUALIFIED', `Call functions by their schema-qualified name (rpc_require_schema_qualified).`, {
        hint: `Call /rpc/${inSchema}.${name}.`,
      });
    }
    return found;
  }
  if (requireQualified && dot <= 0) {
    throw new GatewayError('RPC_NAME_NOT_QUALIFIED', `Call functions by their schema-qualified name (rpc_require_schema_qualified).`, {
      hint: `Exposed schemas: ${schema.schemas.join(', ')}.`,
    });
  }
  throw notFound(schema, name);
}

function notFound(schema: SchemaCache, name: string): GatewayError {
  // Only functions the function allow-list lets the caller call are named.
  const candidates = function* () {
    for (const f of schema.functions) {
      const visible = (v: NameVisibility) => v.callable(f);
      yield { name: f.name, visible };
      yield { name: `${f.schema}.${f.name}`, visible };
    }
  };
  return new GatewayError('NOT_FOUND', `No function named \`${clip(name)}\` is exposed.`, suggestName(name, candidates, (near) => `Did you mean \`${near}\`?`));
}
