/**
 * SQL fragments that request data cannot forge (after pg-sql2 / porsager's postgres).
 *
 * A `Sql` value can only be made by the functions in this module: static text comes from
 * template literals written in our source (`sql\`...\``), identifiers go through `ident()`
 * (always double-quoted), and every value becomes a `$n` parameter (the one exception,
 * `integerLiteral`, writes digits only). `compile` is the only stage that builds SQL, and it only
 * sees names already resolved against the schema cache.
 *
 * A fragment holds references to the fragments inside it, not copies of their parts: building
 * is O(holes) per fragment, and `compileSql` walks the tree with an explicit stack. Neither step
 * recurses or spreads a request-sized array into a call, so no count the caller controls (a
 * thousand filters, a search over every column) can overflow the JS stack (docs/querying.md,
 * "Limits").
 */
/** A bound value among a fragment's parts; a class, so that no text can pass for one. */
class Param {
  constructor(readonly v: unknown) {}
}

type Part = string | Param | Fragment;

/** Only `make` holds it: `new` on a fragment's constructor from outside this module throws. */
const maker = Symbol('tablegate.sql.make');
let isFragment: (value: unknown) => value is Fragment;
let partsOf: (fragment: Fragment) => readonly Part[];

/**
 * A fragment's parts are text (from our templates, `ident` and `catalogType`), bound values and
 * other fragments. They live in a private field, read only through `partsOf` (module-private), and
 * `#parts in x` tells a fragment from anything else; so a fragment need not be frozen, which
 * matters because building one is on every request's path.
 */
class Fragment {
  readonly #parts: readonly Part[];
  constructor(key: typeof maker, parts: readonly Part[]) {
    if (key !== maker) throw new TypeError('sql fragments are made by lib/sql/sql.ts only');
    this.#parts = parts;
  }
  static {
    isFragment = (value: unknown): value is Fragment => typeof value === 'object' && value !== null && #parts in value;
    partsOf = (fragment: Fragment): readonly Part[] => fragment.#parts;
  }
}

export type Sql = Fragment;

export interface CompiledQuery {
  readonly text: string;
  readonly values: readonly unknown[];
}

function make(parts: readonly Part[]): Sql {
  return new Fragment(maker, parts);
}

export function isSql(value: unknown): value is Sql {
  return isFragment(value);
}

/** Tagged template: literal parts are SQL text, `${}` holes must be `Sql` fragments or are bound as values. */
export function sql(strings: TemplateStringsArray, ...holes: unknown[]): Sql {
  // A TemplateStringsArray has a frozen `raw`; a caller forging one from request data would need
  // to call this function with a crafted array, which only our own source does.
  if (!Array.isArray(strings) || !Array.isArray((strings as { raw?: unknown }).raw)) {
    throw new TypeError('sql must be used as a tagged template');
  }
  const parts: Part[] = [];
  for (let i = 0; i < strings.length; i++) {
    const s = strings[i]!;
    if (s !== '') parts.push(s);
    if (i < holes.length) {
      const hole = holes[i];
      parts.push(isFragment(hole) ? hole : new Param(hole));
    }
  }
  return make(parts);
}

/** A bound parameter. */
export function value(v: unknown): Sql {
  return make([new Param(v)]);
}

/**
 * A non-negative safe integer written into the text, never a parameter: only for a list's LIMIT
 * and OFFSET, which the planner must see to reuse one plan for every execution of a prepared
 * statement (docs/architecture.md, "Page size in the text"). Digits only, so no text gets in.
 */
export function integerLiteral(n: number): Sql {
  if (!Number.isSafeInteger(n) || n < 0) throw new TypeError(`not a non-negative safe integer: ${String(n)}`);
  return make([String(n)]);
}

/** A double-quoted identifier; embedded quotes are doubled (PostgreSQL docs §4.1.1). */
export function ident(...names: readonly string[]): Sql {
  return make([names.length === 1 ? quoteIdent(names[0]!) : names.map(quoteIdent).join('.')]);
}

/**
 * Quoted names, remembered: the names come from the schema cache, so there are few of them, and
 * every statement quotes each of its names again. Bounded all the same (cleared when full).
 */
const quoted = new Map<string, string>();
const maxQuoted = 10000;

export function quoteIdent(name: string): string {
  const known = quoted.get(name);
  if (known !== undefined) return known;
  if (name.includes('\u0000')) throw new TypeError('identifier contains a NUL character');
  const q = `"${name.replace(/"/g, '""')}"`;
  if (quoted.size >= maxQuoted) quoted.clear();
  quoted.set(name, q);
  return q;
}

/**
 * A type name exactly as the catalog's `format_type()` printed it (`integer`, `numeric[]`,
 * `public."My Type"`), for casts and column definition lists. Only schema-cache objects carry
 * such text; the shape check is a second lock: quoted parts, or words of letters, digits, `_`,
 * `$` and spaces, dot-separated, with `[]` suffixes.
 */
export function catalogType(name: string): Sql {
  if (!CATALOG_TYPE.test(name)) throw new TypeError(`not a catalog type name: ${JSON.stringify(name.slice(0, 64))}`);
  return make([name]);
}

const CATALOG_TYPE = /^(?:"(?:[^"\u0000]|"")+"|[A-Za-z_][A-Za-z0-9_$ ]*)(?:\.(?:"(?:[^"\u0000]|"")+"|[A-Za-z_][A-Za-z0-9_$ ]*))*(?:\[\])*$/;

const comma = sql`, `;

/** Joins fragments with a separator written in our source. */
export function join(fragments: readonly Sql[], separator: Sql = comma): Sql {
  if (!isFragment(separator)) throw new TypeError('join: the separator is not an sql fragment');
  const parts: Part[] = [];
  for (let i = 0; i < fragments.length; i++) {
    const f = fragments[i];
    if (!isFragment(f)) throw new TypeError('join: an item is not an sql fragment');
    if (i > 0) parts.push(separator);
    parts.push(f);
  }
  return make(parts);
}

export const empty: Sql = make([]);

/**
 * Numbers the parameters: the only place a `{ text, values }` pair is made. A depth-first walk
 * over the fragment tree with an explicit stack (each entry: a fragment's parts and the next
 * index), so a tree of any depth or width compiles without recursion.
 */
export function compileSql(fragment: Sql): CompiledQuery {
  if (!isFragment(fragment)) throw new TypeError('compileSql: not an sql fragment');
  let text = '';
  const values: unknown[] = [];
  // Two parallel stacks (parts, next index) instead of an object per level.
  const partsStack: (readonly Part[])[] = [partsOf(fragment)];
  const nextStack: number[] = [0];
  let depth = 0;
  while (depth >= 0) {
    const parts = partsStack[depth]!;
    const index = nextStack[depth]!;
    if (index === parts.length) {
      partsStack.pop();
      nextStack.pop();
      depth--;
      continue;
    }
    nextStack[depth] = index + 1;
    const part = parts[index]!;
    if (typeof part === 'string') text += part;
    else if (part instanceof Param) {
      values.push(part.v);
      text += `$${values.length}`;
    } else {
      partsStack.push(partsOf(part));
      nextStack.push(0);
      depth++;
    }
  }
  return Object.freeze({ text, values: Object.freeze(values) });
}
