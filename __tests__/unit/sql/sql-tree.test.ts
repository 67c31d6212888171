/**
 * lib/sql/sql.ts keeps fragments as a tree and compiles it with an explicit stack. Guards the
 * fuzz finding "25,000 filters in one URL -> RangeError: Maximum call stack size exceeded in the
 * SQL builder": neither very wide fragments (join of 200,000 conditions) nor very deep ones
 * (100,000 nested levels) may overflow the stack, and numbering stays in text order.
 */
import { compileSql, empty, ident, isSql, join, quoteIdent, sql, type Sql } from '../../../lib/sql/sql';

describe('sql fragment tree', () => {
  it('numbers parameters in text order across nested fragments and separators', () => {
    const inner = join([sql`a = ${1}`, sql`b = ${2}`, empty, sql`c IN (${join([sql`${3}`, sql`${4}`])})`], sql` AND `);
    const q = compileSql(sql`SELECT ${ident('t')} WHERE ${inner} LIMIT ${5}`);
    expect(q.text).toBe('SELECT "t" WHERE a = $1 AND b = $2 AND  AND c IN ($3, $4) LIMIT $5');
    expect(q.values).toEqual([1, 2, 3, 4, 5]);
  });

  it('reuses one fragment in several places, numbering each use', () => {
    const cond = sql`x = ${'v'}`;
    expect(compileSql(sql`${cond} OR ${cond}`)).toEqual({ text: 'x = $1 OR x = $2', values: ['v', 'v'] });
  });

  it('compiles a join of 200,000 fragments (wider than any argument list)', () => {
    const n = 200000;
    const conditions = Array.from({ length: n }, (_, i) => sql`_t.${ident('c')} = ${i}`);
    const q = compileSql(sql`SELECT 1 WHERE ${join(conditions, sql` AND `)}`);
    expect(q.values).toHaveLength(n);
    expect(q.values[n - 1]).toBe(n - 1);
    expect(q.text.endsWith(`_t."c" = $${n}`)).toBe(true);
  });

  it('compiles a fragment nested 100,000 levels deep', () => {
    let f: Sql = sql`${0}`;
    for (let i = 1; i < 100000; i++) f = sql`(${f} + ${i})`;
    const q = compileSql(f);
    expect(q.values).toHaveLength(100000);
    expect(q.text.startsWith('(((')).toBe(true);
    expect(q.text.endsWith('+ $100000)')).toBe(true);
  });

  it('splices only real fragments: a look-alike (same prototype, or any object) is bound as a value', () => {
    const real = sql`DROP TABLE t`;
    const lookAlike = Object.create(Object.getPrototypeOf(real) as object) as unknown;
    expect(isSql(real)).toBe(true);
    expect(isSql(lookAlike)).toBe(false);
    expect(isSql({ parts: ['DROP TABLE t'] })).toBe(false);
    expect(compileSql(sql`SELECT ${lookAlike}, ${{ parts: ['x'] }}`)).toEqual({ text: 'SELECT $1, $2', values: [lookAlike, { parts: ['x'] }] });
    expect(() => join([lookAlike as Sql])).toThrow(TypeError);
    expect(() => join([real], lookAlike as Sql)).toThrow(TypeError);
    expect(() => compileSql(lookAlike as Sql)).toThrow(TypeError);
    const Constructor = real.constructor as new (...args: unknown[]) => Sql;
    expect(() => new Constructor(Symbol('tablegate.sql.make'), ['DROP TABLE t'])).toThrow(TypeError);
  });

  it('quotes a name the same way every time (remembered quotes), and never remembers a refused one', () => {
    for (let round = 0; round < 2; round++) {
      expect(quoteIdent('we"ird')).toBe('"we""ird"');
      expect(compileSql(sql`${ident('s', 'a"b')}`).text).toBe('"s"."a""b"');
      expect(() => quoteIdent('a\u0000b')).toThrow(TypeError);
    }
  });
});
