/**
 * PostgREST's `select` grammar -> a tree of unresolved items (docs/postgrest-dialect.md, "select").
 *   item   = '*' | embed | count | field
 *   field  = [alias ':'] name ('->' key | '->>' key)* ['::' cast] ['.' fn '()' ['::' cast]]
 *   count  = [alias ':'] 'count()' ['::' cast]
 *   embed  = ['...'] [alias ':'] name ('!' hint)* '(' [item (',' item)*] ')'
 *   name   = "quoted" | characters other than , ( ) ! : . - > and whitespace
 * In: the parameter's text. Out: RawItems; names are still text (resolve-select.ts resolves
 * them). Never: recurses deeper than `maxSelectDepth`, accepts more than `maxSelectItems`
 * items, or the same item (one column with the same path, casts and aggregate, or one embedded
 * relation, whatever their aliases) more than `maxSelectRepeats` times in one level: aliases
 * repeat a value in every row of the body, so a short query string could ask for a body hundreds
 * of times the size of the rows (max_response_bytes bounds the body, this the amplification); any malformed text is PGRST100 with the position, never a throw of another kind.
 */
import { PostgrestError } from '../postgrest-error';
import { clip as clipText } from '../../shared/resolve-names';
import { scanQuoted } from './quoted-name';

export interface RawStep {
  readonly key: string;
  readonly asText: boolean;
}

export type RawItem =
  | { readonly kind: 'star' }
  | { readonly kind: 'field'; readonly alias: string | null; readonly name: string; readonly path: readonly RawStep[]; readonly cast: string | null; readonly aggregate: string | null; readonly resultCast: string | null }
  | { readonly kind: 'count'; readonly alias: string | null; readonly resultCast: string | null }
  | { readonly kind: 'embed'; readonly alias: string | null; readonly name: string; readonly hints: readonly string[]; readonly spread: boolean; readonly items: readonly RawItem[] };

export const maxSelectDepth = 8;
export const maxSelectItems = 1600;
export const maxSelectRepeats = 4;

export function parseSelect(text: string): RawItem[] {
  const p = new SelectParser(text);
  const items = p.items(0);
  p.skipSpace();
  if (!p.done()) p.fail(`unexpected "${p.peek()}"`);
  return items;
}

const nameStop = new Set([',', '(', ')', '!', ':', '.', '-', '>', '"', '*']);

export class SelectParser {
  private i = 0;
  private count = 0;
  constructor(private readonly text: string) {}

  done(): boolean {
    return this.i >= this.text.length;
  }
  peek(): string {
    return this.text[this.i] ?? '';
  }
  skipSpace(): void {
    while (this.i < this.text.length && /\s/.test(this.text[this.i]!)) this.i++;
  }
  fail(what: string): never {
    throw new PostgrestError('PGRST100', `"failed to parse select parameter (${clip(this.text)})" (at character ${this.i + 1}: ${what})`, {
      details: `unexpected ${this.done() ? 'end of input' : `"${this.peek()}"`}`,
    });
  }
  private eat(s: string): boolean {
    if (this.text.startsWith(s, this.i)) {
      this.i += s.length;
      return true;
    }
    return false;
  }

  items(depth: number): RawItem[] {
    if (depth > maxSelectDepth) this.fail(`embedding deeper than ${maxSelectDepth} levels`);
    const items: RawItem[] = [];
    const repeats = new Map<string, number>();
    for (;;) {
      this.skipSpace();
      if (this.done() || this.peek() === ')') break;
      if (++this.count > maxSelectItems) this.fail(`more than ${maxSelectItems} items`);
      const item = this.item(depth);
      const key = repeatKey(item);
      const times = (repeats.get(key) ?? 0) + 1;
      if (times > maxSelectRepeats) this.fail(`${key} selected more than ${maxSelectRepeats} times, aliases included`);
      repeats.set(key, times);
      items.push(item);
      this.skipSpace();
      if (!this.eat(',')) break;
    }
    return items;
  }

  private item(depth: number): RawItem {
    const spread = this.eat('...');
    this.skipSpace();
    if (!spread && this.eat('*')) return { kind: 'star' };
    let name = this.name();
    let alias: string | null = null;
    this.skipSpace();
    if (this.text.startsWith(':', this.i) && !this.text.startsWith('::', this.i)) {
      this.i++;
      this.skipSpace();
      alias = name;
      name = this.name();
      this.skipSpace();
    }
    if (!spread && name === 'count' && this.eat('()')) return { kind: 'count', alias, resultCast: this.cast() };
    const hints: string[] = [];
    while (this.eat('!')) hints.push(this.name());
    this.skipSpace();
    if (this.eat('(')) {
      const items = this.items(depth + 1);
      this.skipSpace();
      if (!this.eat(')')) this.fail('expected ")"');
      return { kind: 'embed', alias, name, hints, spread, items };
    }
    if (spread) this.fail('"..." spreads an embedded resource: name(columns)');
    if (hints.length) this.fail('"!" hints an embedded resource: name!hint(columns)');
    const path: RawStep[] = [];
    for (;;) {
      if (this.eat('->>')) path.push({ key: this.name(), asText: true });
      else if (this.eat('->')) path.push({ key: this.name(), asText: false });
      else break;
      if (path.length > 16) this.fail('a JSON path of more than 16 steps');
    }
    const cast = this.cast();
    let aggregate: string | null = null;
    let resultCast: string | null = null;
    if (this.eat('.')) {
      aggregate = this.word();
      if (!this.eat('()')) this.fail('expected "()" after an aggregate function');
      resultCast = this.cast();
    }
    return { kind: 'field', alias, name, path, cast, aggregate, resultCast };
  }

  private cast(): string | null {
    if (!this.eat('::')) return null;
    const start = this.i;
    while (this.i < this.text.length && /[A-Za-z0-9_[\]]/.test(this.text[this.i]!)) this.i++;
    if (this.i === start) this.fail('expected a type after "::"');
    return this.text.slice(start, this.i).toLowerCase();
  }

  private word(): string {
    const start = this.i;
    while (this.i < this.text.length && /[A-Za-z_]/.test(this.text[this.i]!)) this.i++;
    if (this.i === start) this.fail('expected a function name');
    return this.text.slice(start, this.i);
  }

  /** A name: `"quoted"` (a backslash escapes the next character: quoted-name.ts), or characters up to a delimiter, trimmed. */
  name(): string {
    this.skipSpace();
    if (this.text[this.i] === '"') {
      const quoted = scanQuoted(this.text, this.i);
      if (quoted === null) this.fail('unterminated quoted name');
      this.i = quoted!.end;
      if (quoted!.value === '') this.fail('empty name');
      return quoted!.value;
    }
    const start = this.i;
    while (this.i < this.text.length && !nameStop.has(this.text[this.i]!)) this.i++;
    const name = this.text.slice(start, this.i).trim();
    if (name === '') this.fail('expected a name');
    return name;
  }
}

/** Caller text in the dialect's messages: resolve-names.ts's clip, at 80 characters. */
export function clip(text: string, max = 80): string {
  return clipText(text, max);
}

/** What makes two items the same for maxSelectRepeats (aliases aside), as the error names it. */
function repeatKey(item: RawItem): string {
  switch (item.kind) {
    case 'star':
      return '"*"';
    case 'count':
      return '"count()"';
    case 'embed':
      return `the embedded resource "${clipText(item.name, 40)}"`;
    case 'field': {
      const path = item.path.map((s) => `${s.asText ? '->>' : '->'}${s.key}`).join('');
      const text = `${item.name}${path}${item.cast === null ? '' : `::${item.cast}`}${item.aggregate === null ? '' : `.${item.aggregate}()`}${item.resultCast === null ? '' : `::${item.resultCast}`}`;
      return `"${clipText(text, 40)}"`;
    }
  }
}

