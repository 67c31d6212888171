/**
 * SQL fragments that request data cannot forge (after pg-sql2 / porsager's postgres).
 *
 * A `Sql` value can only be made by the functions in this module: static text comes from
 * template literals written in our source (`sql\`...\``), identifiers go through `ident()`
 * (always double-quoted), and every value becomes a `$n` parameter. `compile` is the only
 * stage that builds SQL, and it only sees names already resolved against the schema cache.
 *
 * A fragment holds references to the fragments inside it, not copies of their parts: building
 * is O(holes) per fragment, and `compileSql` walks the tree with an explicit stack. Neither step
 * recurses or spreads a request-sized array into a call, so no count the caller controls (a
 * thousand filters, a search over every column) can overflow the JS stack (docs/querying.md,
 * "Limits").
 */
const brand: unique symbol = Symbol('tablegate.sql');

type Part = { readonly t: 'text'; readonly s: string } | { readonly t: 'value'; readonly v: unknown } | { readonly t: 'sql'; readonly f: Sql };

export interface Sql {
  readonly [brand]: readonly Part[];
}

export interface CompiledQuery {
  readonly text: string;
  readonly values: readonly unknown[];
}

function make(parts: readonly Part[]): Sql {
  return Object.freeze({ [brand]: parts }) as Sql;
}

export function isSql(value: unknown): value is Sql {
  return typeof value === 'object' && value !== null && brand in value;
}

/** Tagged template: literal parts are SQL text, `${}` holes must be `Sql` fragments or are bound as values. */
export function sql(strings: TemplateStringsArray, ...holes: unknown[]): Sql {
  // A TemplateStringsArray has a frozen `raw`; a caller forging one from request data would need
  // to call this function with a crafted array, which only our own source does.
  if (!Array.isArray(strings) || !Array.isArray((strings as { raw?: unknown }).raw)) {
    throw new TypeError('sql must be used as a tagged template');
  }
  const parts: Part[] = [];
  strings.forEach((s, i) => {
    if (s) parts.push({ t: 'text', s });
    if (i < holes.length) {
      const hole = holes[i];
      parts.push(isSql(hole) ? { t: 'sql', f: hole } : { t: 'value', v: hole });
    }
  });
  return make(parts);
}

/** A bound parameter. */
export function value(v: unknown): Sql {
  return make([{ t: 'value', v }]);
}

/**
 * A non-negative safe integer written into the text, never a parameter: only for a list's LIMIT
 * and OFFSET, which the planner must see to reuse one plan for every execution of a prepared
 * statement (docs/architecture.md, "Page size in the text"). Digits only, so no text gets in.
 */
export function integerLiteral(n: number): Sql {
  if (!Number.isSafeInteger(n) || n < 0) throw new TypeError(`not a non-negative safe integer: ${String(n)}`);
  return make([{ t: 'text', s: String(n) }]);
}

/** A double-quoted identifier; embedded quotes are doubled (PostgreSQL docs §4.1.1). */
export function ident(...names: readonly string[]): Sql {
  return make([{ t: 'text', s: names.map(quoteIdent).join('.') }]);
}

export function quoteIdent(name: string): string {
  if (name.includes('\u0000')) throw new TypeError('identifier contains a NUL character');
  return `"${name.replace(/"/g, '""')}"`;
}

/**
 * A type name exactly as the catalog's `format_type()` printed it (`integer`, `numeric[]`,
 * `public."My Type"`), for casts and column definition lists. Only schema-cache objects carry
 * such text; the shape check is a second lock: quoted parts, or words of letters, digits, `_`,
 * `$` and spaces, dot-separated, with `[]` suffixes.
 */
export function catalogType(name: string): Sql {
  if (!CATALOG_TYPE.test(name)) throw new TypeError(`not a catalog type name: ${JSON.stringify(name.slice(0, 64))}`);
  return make([{ t: 'text', s: name }]);
}

const CATALOG_TYPE = /^(?:"(?:[^"\u0000]|"")+"|[A-Za-z_][A-Za-z0-9_$ ]*)(?:\.(?:"(?:[^"\u0000]|"")+"|[A-Za-z_][A-Za-z0-9_$ ]*))*(?:\[\])*$/;

/** Joins fragments with a separator written in our source. */
export function join(fragments: readonly Sql[], separator: Sql = sql`, `): Sql {
  const parts: Part[] = [];
  fragments.forEach((f, i) => {
    if (i > 0) parts.push({ t: 'sql', f: separator });
    parts.push({ t: 'sql', f });
  });
  return make(parts);
}

export const empty: Sql = make([]);

/**
 * Numbers the parameters: the only place a `{ text, values }` pair is made. A depth-first walk
 * over the fragment tree with an explicit stack (each entry: a fragment's parts and the next
 * index), so a tree of any depth or width compiles without recursion.
 */
export function compileSql(fragment: Sql): CompiledQuery {
  const text: string[] = [];
  const values: unknown[] = [];
  const stack: { parts: readonly Part[]; next: number }[] = [{ parts: fragment[brand], next: 0 }];
  while (stack.length > 0) {
    const top = stack[stack.length - 1]!;
    const part = top.parts[top.next++];
    if (part === undefined) stack.pop();
    else if (part.t === 'text') text.push(part.s);
    else if (part.t === 'value') {
      values.push(part.v);
      text.push(`$${values.length}`);
    } else stack.push({ parts: part.f[brand], next: 0 });
  }
  return Object.freeze({ text: text.join(''), values: Object.freeze(values) });
}
