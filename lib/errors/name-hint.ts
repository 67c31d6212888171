/**
 * A "did you mean" hint that names only what the caller may see (docs/security.md, "Names a
 * caller cannot see"). Parse finds an unknown name before the policy has run, so the error keeps
 * the candidates and the request handler asks which of them the caller's access policy (and the
 * function allow-list) lets it see, on the error path only: the nearest visible name or no hint.
 */
import { nearestName } from './nearest-name';

/**
 * A table and a function of the schema cache (lib/schema/schema-types.ts's Table and DbFunction),
 * as far as a hint asks about them: errors/ names no schema type, so that errors/ and schema/
 * import one way (docs/architecture.md, "Which code may import what").
 */
interface Table {
  readonly name: string;
  readonly columns: readonly { readonly name: string }[];
}
type DbFunction = object;

/** What one caller may see, asked the same way the policy stage and the API descriptions ask. */
export interface NameVisibility {
  /** The caller may read the table, and with `column` that column of it. */
  readable(table: Table, column?: string): boolean;
  /** The caller may call the function (the function allow-list). */
  callable(fn: DbFunction): boolean;
}

/** Every table, column and function: what the hint names when nobody restricts it (unit tests, no policy). */
export const everythingVisible: NameVisibility = Object.freeze({ readable: () => true, callable: () => true });

/** No name at all: a caller not yet known. */
export const nothingVisible: NameVisibility = Object.freeze({ readable: () => false, callable: () => false });

export interface NameCandidate {
  readonly name: string;
  readonly visible: (v: NameVisibility) => boolean;
}

/** Which of the visible names a hint names for the input, if any (a door may score nearness its own way). */
export type ChooseName = (input: string, names: readonly string[]) => string | undefined;

export class NameHint {
  constructor(
    private readonly input: string,
    private readonly candidates: () => Iterable<NameCandidate>,
    private readonly format: (near: string) => string,
    private readonly choose: ChooseName = nearestName,
  ) {}

  /** The hint naming the nearest candidate the caller may see, or undefined. */
  hintFor(visibility: NameVisibility): string | undefined {
    const names: string[] = [];
    for (const c of this.candidates()) if (c.visible(visibility)) names.push(c.name);
    const near = this.choose(this.input, names);
    return near === undefined ? undefined : this.format(near);
  }
}

/**
 * Options for an error with a "did you mean" hint: the hint over every candidate (what a unit test
 * of a stage sees) and the NameHint the request handler narrows to the caller's view.
 */
export function suggestName(input: string, candidates: () => Iterable<NameCandidate>, format: (near: string) => string, choose?: ChooseName): { hint?: string; names: NameHint } {
  const names = new NameHint(input, candidates, format, choose);
  const hint = names.hintFor(everythingVisible);
  return hint === undefined ? { names } : { hint, names };
}

/**
 * Candidates: tables by the names they are reached by (`[name, table]`, read again on each ask, so
 * a Map's entries or an array, never a one-pass iterator), and the columns of one table.
 */
export function tableCandidates(tables: () => Iterable<readonly [string, Table]>): () => Iterable<NameCandidate> {
  return function* () {
    for (const [name, t] of tables()) yield { name, visible: (v: NameVisibility) => v.readable(t) };
  };
}

export function columnCandidates(table: Table): () => Iterable<NameCandidate> {
  return function* () {
    for (const c of table.columns) yield { name: c.name, visible: (v: NameVisibility) => v.readable(table, c.name) };
  };
}
