/**
 * The one mapping from a PostgreSQL type to the JSON Schema of the value the gateway sends for it
 * (docs/openapi.md, "Types"), used by the OpenAPI document and by `tablegate gen types` alike.
 *
 * In: a type oid, the schema cache's type map, whether NULL is possible, and how to name an enum.
 * Out: a plain JSON Schema (2020-12, as OpenAPI 3.1 uses it). Never: guesses a JSON shape that
 * PostgreSQL does not produce.
 *
 * The gateway does not render values itself: PostgreSQL builds the response with `to_json` /
 * `json_agg` (docs/architecture.md), so the JSON of a value is what `to_json` makes of its type
 * (PostgreSQL manual, "JSON Functions", to_json: "numbers ... as JSON numbers, booleans as JSON
 * booleans, arrays and composites recursively ... a cast to json if there is one, else the text
 * output"). A domain renders as its base type. Checked against real responses in
 * __tests__/integration/kinds-read.test.ts and __tests__/integration/openapi.test.ts:
 *   - smallint, integer, bigint: JSON numbers (bigint keeps every digit in the JSON text);
 *   - real, double precision, numeric: JSON numbers with every digit PostgreSQL has, except the
 *     strings "NaN", "Infinity" and "-Infinity" (a numeric with a declared precision holds NaN but
 *     no infinity);
 *   - boolean: true/false; json, jsonb: the JSON itself;
 *   - date, timestamp, timestamptz: ISO 8601 text (timestamptz with its offset); `infinity` too;
 *   - arrays: JSON arrays (elements may be NULL; a multi-dimensional value nests arrays);
 *   - composites: objects with every attribute (NULL attributes as null);
 *   - enums: the label; everything else (money, oid, interval, ranges, bytea as `\x...`, uuid, ...):
 *     its text output, a JSON string.
 */
import type { PgType } from '../schema/schema-types';

/** A JSON Schema object (the subset this module and its readers use). */
export type JsonSchema = { readonly [key: string]: unknown };

export interface TypeNaming {
  /** A `$ref` for an enum type, or undefined to write its labels inline. */
  readonly enumRef?: (type: PgType) => string | undefined;
}

const BOOL = 16;
const INT8 = 20;
const INT2 = 21;
const INT4 = 23;
const JSON_OID = 114;
const FLOAT4 = 700;
const FLOAT8 = 701;
const DATE = 1082;
const TIME = 1083;
const TIMESTAMP = 1114;
const TIMESTAMPTZ = 1184;
const TIMETZ = 1266;
const NUMERIC = 1700;
const UUID = 2950;
const JSONB = 3802;
const BYTEA = 17;

/** The strings PostgreSQL writes for the floats and numerics that are not numbers. */
export const NOT_A_NUMBER = Object.freeze(['NaN', 'Infinity', '-Infinity'] as const);

/** The JSON Schema of a value of type `oid` (NULL included when `nullable`). */
export function jsonSchemaOfType(oid: number, types: ReadonlyMap<number, PgType> | undefined, nullable: boolean, naming: TypeNaming = {}, fallbackCategory = ''): JsonSchema {
  return orNull(schemaOf(oid, types, naming, fallbackCategory, 0), nullable);
}

function schemaOf(oid: number, types: ReadonlyMap<number, PgType> | undefined, naming: TypeNaming, fallbackCategory: string, depth: number): JsonSchema {
  const known = builtin(oid);
  if (known) return known;
  const type = types?.get(oid);
  // A type the cache does not hold (a hand-built cache): its category is all there is to go by.
  if (type === undefined || depth > 16) return byCategory(fallbackCategory);
  if (type.typtype === 'd' && type.baseOid !== null) return schemaOf(type.baseOid, types, naming, '', depth + 1);
  if (type.elementOid !== null) return { type: 'array', items: orNull(schemaOf(type.elementOid, types, naming, '', depth + 1), true) };
  if (type.typtype === 'e') {
    const ref = naming.enumRef?.(type);
    return ref === undefined ? { type: 'string', enum: [...type.labels] } : { $ref: ref };
  }
  if (type.typtype === 'c') {
    const properties: Record<string, JsonSchema> = {};
    for (const a of type.attributes) properties[a.name] = orNull(schemaOf(a.typeOid, types, naming, '', depth + 1), true);
    return { type: 'object', properties, required: type.attributes.map((a) => a.name), additionalProperties: false };
  }
  return byCategory(type.category);
}

function builtin(oid: number): JsonSchema | undefined {
  switch (oid) {
    case BOOL:
      return { type: 'boolean' };
    case INT2:
    case INT4:
      return { type: 'integer', format: 'int32' };
    case INT8:
      return { type: 'integer', format: 'int64' };
    case FLOAT4:
    case FLOAT8:
    case NUMERIC:
      return { anyOf: [{ type: 'number' }, { type: 'string', enum: [...NOT_A_NUMBER] }] };
    case JSON_OID:
    case JSONB:
      return {};
    case UUID:
      return { type: 'string', format: 'uuid' };
    case DATE:
      return { type: 'string', format: 'date' };
    case TIMESTAMPTZ:
      return { type: 'string', format: 'date-time' };
    case TIMESTAMP:
      return { type: 'string', description: 'ISO 8601 date and time without an offset' };
    case TIME:
    case TIMETZ:
      return { type: 'string', description: 'time of day' };
    case BYTEA:
      return { type: 'string', description: 'bytes as \\x followed by hex digits' };
    default:
      return undefined;
  }
}

/** Without the type itself: booleans are 'B'; every other category renders as text, except numbers whose oid was not built in. */
function byCategory(category: string): JsonSchema {
  if (category === 'B') return { type: 'boolean' };
  return { type: 'string' };
}

/** `schema` or null. */
export function orNull(schema: JsonSchema, nullable: boolean): JsonSchema {
  if (!nullable) return schema;
  const { type } = schema;
  if (typeof type === 'string' && schema.enum === undefined) return { ...schema, type: [type, 'null'] };
  if (Object.keys(schema).length === 0) return schema; // any JSON value, null included
  return { anyOf: [schema, { type: 'null' }] };
}
