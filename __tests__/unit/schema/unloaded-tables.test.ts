/**
 * UnloadedTables bounds what an unknown table's 404 may cost: plain names only, each name looked
 * up at most once per second, at most `perSecond` lookups in a second, a failed lookup is a no.
 */
import { UnloadedTables } from '../../../lib/schema/unloaded-tables';

function counting(answer: (name: string) => Promise<boolean> = async () => true) {
  const asked: string[] = [];
  let now = 10_000;
  const tables = new UnloadedTables((name) => (asked.push(name), answer(name)), 10, () => now);
  return { tables, asked, advance: (ms: number) => (now += ms) };
}

test('a burst of 100 distinct names costs 10 lookups; the rest get no hint', async () => {
  const { tables, asked } = counting();
  const answers = await Promise.all(Array.from({ length: 100 }, (_, i) => tables.exists(`t${i}`)));
  expect(asked).toHaveLength(10);
  expect(answers.filter(Boolean)).toHaveLength(10);
});

test('the same name is looked up once per second', async () => {
  const { tables, asked, advance } = counting();
  for (let i = 0; i < 5; i++) expect(await tables.exists('late_table')).toBe(true);
  expect(asked).toEqual(['late_table']);
  advance(999);
  await tables.exists('late_table');
  expect(asked).toHaveLength(1);
  advance(1);
  await tables.exists('late_table');
  expect(asked).toEqual(['late_table', 'late_table']);
});

test('the budget comes back in the next second', async () => {
  const { tables, asked, advance } = counting();
  await Promise.all(Array.from({ length: 20 }, (_, i) => tables.exists(`a${i}`)));
  advance(1000);
  expect(await tables.exists('b0')).toBe(true);
  expect(asked).toHaveLength(11);
});

test('names that are not plain identifiers are never looked up', async () => {
  const { tables, asked } = counting();
  for (const name of ['', "x' OR '1'='1", 'we"ird table', 'a-b', '1abc', 'a'.repeat(64), 'rpc/x']) expect(await tables.exists(name)).toBe(false);
  expect(await tables.exists('a'.repeat(63))).toBe(true);
  expect(asked).toEqual(['a'.repeat(63)]);
});

test('a lookup that fails is a no, not an error', async () => {
  const { tables } = counting(async () => {
    throw new Error('database down');
  });
  expect(await tables.exists('late_table')).toBe(false);
});
