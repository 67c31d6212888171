/**
 * The one PostgreSQL type -> JSON Schema mapping (lib/describe/json-schema-of-type.ts) and its
 * TypeScript rendering (tsOf in lib/describe/database-types.ts). What PostgreSQL really sends for
 * each type is checked against a real server in __tests__/integration/openapi.test.ts and
 * kinds-read.test.ts; these pin the mapping itself.
 */
import { tsOf } from '../../../lib/describe/database-types';
import { jsonSchemaOfType } from '../../../lib/describe/json-schema-of-type';
import type { PgType } from '../../../lib/schema/schema-types';

const type = (oid: number, over: Partial<PgType>): [number, PgType] => [oid, { oid, schema: 's', name: `t${oid}`, typtype: 'b', category: 'U', elementOid: null, baseOid: null, labels: [], attributes: [], ...over }];
const types = new Map<number, PgType>([
  type(9001, { typtype: 'e', category: 'E', name: 'mood', labels: ['sad', 'say "hi"'] }),
  type(9002, { typtype: 'd', category: 'N', baseOid: 20 }), // a domain over bigint
  type(9003, { category: 'A', elementOid: 9001 }), // mood[]
  type(9004, { typtype: 'c', category: 'C', attributes: [{ name: 'x', typeOid: 23 }, { name: 'm', typeOid: 9001 }] }),
  type(790, { name: 'money', category: 'N' }),
]);

describe('jsonSchemaOfType', () => {
  it.each([
    [16, false, { type: 'boolean' }],
    [23, false, { type: 'integer', format: 'int32' }],
    [20, true, { type: ['integer', 'null'], format: 'int64' }],
    [1700, false, { anyOf: [{ type: 'number' }, { type: 'string', enum: ['NaN', 'Infinity', '-Infinity'] }] }],
    [701, true, { anyOf: [{ anyOf: [{ type: 'number' }, { type: 'string', enum: ['NaN', 'Infinity', '-Infinity'] }] }, { type: 'null' }] }],
    [3802, true, {}],
    [2950, false, { type: 'string', format: 'uuid' }],
    [1184, false, { type: 'string', format: 'date-time' }],
    [1082, false, { type: 'string', format: 'date' }],
    [790, false, { type: 'string' }], // money is its text output, never a number
    [9002, false, { type: 'integer', format: 'int64' }], // a domain renders as its base type
    [9001, true, { anyOf: [{ type: 'string', enum: ['sad', 'say "hi"'] }, { type: 'null' }] }],
    [9003, false, { type: 'array', items: { anyOf: [{ type: 'string', enum: ['sad', 'say "hi"'] }, { type: 'null' }] } }],
    [9004, false, { type: 'object', properties: { x: { type: ['integer', 'null'], format: 'int32' }, m: { anyOf: [{ type: 'string', enum: ['sad', 'say "hi"'] }, { type: 'null' }] } }, required: ['x', 'm'], additionalProperties: false }],
  ])('type %i (nullable %s)', (oid, nullable, expected) => {
    expect(jsonSchemaOfType(oid, types, nullable)).toEqual(expected);
  });

  it('names enums through the given reference', () => {
    expect(jsonSchemaOfType(9001, types, false, { enumRef: (t) => `#/enums/${t.name}` })).toEqual({ $ref: '#/enums/mood' });
  });

  it('falls back to the category for a type the cache does not hold', () => {
    expect(jsonSchemaOfType(12345, undefined, false, {}, 'B')).toEqual({ type: 'boolean' });
    expect(jsonSchemaOfType(12345, undefined, false, {}, 'N')).toEqual({ type: 'string' });
  });
});

describe('tsOf', () => {
  it.each([
    [{ type: ['integer', 'null'] }, 'number | null'],
    [{ anyOf: [{ type: 'number' }, { type: 'string', enum: ['NaN', 'Infinity', '-Infinity'] }] }, 'number | "NaN" | "Infinity" | "-Infinity"'],
    [{}, 'Json'],
    [{ $ref: '#/enums/mood' }, 'Database[\'enums\']["mood"]'],
    [{ type: 'array', items: { type: ['string', 'null'] } }, '(string | null)[]'],
    [{ type: 'array', items: { type: 'string' } }, 'string[]'],
    [{ type: 'array', prefixItems: [{ type: 'integer' }, { type: 'string' }], minItems: 1 }, '[number, string?]'],
    [{ type: 'object', properties: { a: { type: 'boolean' }, 'b c': { type: 'null' } }, required: ['a'] }, '{\n  a: boolean;\n  "b c"?: null;\n}'],
  ])('%j -> %s', (schema, expected) => {
    expect(tsOf(schema)).toBe(expected);
  });
});
