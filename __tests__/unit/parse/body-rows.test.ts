/** The write commands carry their body rows as key -> value text, exact as received (no JSON.parse rounding). */
import { bodyRowsOf } from '../../../lib/doors/shared/body-rows';
import { splitJsonObject } from '../../../lib/doors/shared/split-json-object';
import { parseInsert } from '../../../lib/doors/rest/parse/parse-insert';
import { parseUpdate } from '../../../lib/doors/rest/parse/parse-update';
import { testConfig } from '../auth/config-fixture';
import { items, writeRequest } from '../writes/write-fixture';

describe('splitJsonObject', () => {
  it('keeps each value as its text: numbers unrounded, strings with their quotes and escapes, nested values whole', () => {
    const text = ' { "big" : 9223372036854775807 , "n":1.000000000000000000001, "s":"a,}\\"b", "j":{"x":[1,{"y":"]"}]}, "z":null , "t":true }';
    expect(splitJsonObject(text)).toEqual([
      ['big', '9223372036854775807'],
      ['n', '1.000000000000000000001'],
      ['s', '"a,}\\"b"'],
      ['j', '{"x":[1,{"y":"]"}]}'],
      ['z', 'null'],
      ['t', 'true'],
    ]);
  });

  it('decodes escaped keys and handles an empty object', () => {
    expect(splitJsonObject('{"\\u0061\\"b":1}')).toEqual([['a"b', '1']]);
    expect(splitJsonObject('{}')).toEqual([]);
    expect(splitJsonObject('{ }')).toEqual([]);
  });
});

describe('bodyRowsOf', () => {
  it('splits a batch into frozen rows; a repeated key keeps its last value, as JSON.parse does', () => {
    const rows = bodyRowsOf('[{"a":1,"a":2},{"b":"x"}]', true);
    expect(rows).toEqual([{ a: '2' }, { b: '"x"' }]);
    expect(Object.isFrozen(rows) && Object.isFrozen(rows[0])).toBe(true);
    expect(bodyRowsOf('{"a":[1, 2]}', false)).toEqual([{ a: '[1, 2]' }]);
  });
});

describe('write commands carry their rows', () => {
  const config = testConfig();
  it('insert: one row per object of the body, with the exact number texts', () => {
    expect(parseInsert(items, writeRequest('POST', '{"big":9007199254740993,"sku":"a"}'), config).rows).toEqual([{ big: '9007199254740993', sku: '"a"' }]);
    expect(parseInsert(items, writeRequest('POST', '[{"sku":"a"},{"sku":"b","qty":12345678901234567890}]'), config).rows).toEqual([{ sku: '"a"' }, { sku: '"b"', qty: '12345678901234567890' }]);
  });
  it('update: the object body as one row', () => {
    expect(parseUpdate(items, writeRequest('PATCH', '{"qty": 3e2}', { id: '1' }), config).row).toEqual({ qty: '3e2' });
  });
});
