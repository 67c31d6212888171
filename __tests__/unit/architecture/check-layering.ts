/**
 * checkLayering: a lib/ tree -> the imports that break its layering (docs/architecture.md,
 * "Which code may import what"). Plain Node (fs, path), no dependency.
 * - A stage (lib/stages/<stage>/) imports no file of another stage.
 * - The floors below the stages (pipeline/, command/, db/, http/, config/, schema/, errors/, sql/,
 *   ops/, describe/) import no file under stages/.
 * - A file whose name contains "render" imports no compile file.
 * - No import cycle, type-only imports included.
 * - No two folders import each other, directly or round a longer loop (a folder is a top-level
 *   folder of lib/, each stages/<stage> and doors/<door> its own, and the files at lib/'s top one more):
 *   two folders that import each other are one room or a missing floor.
 * - No comment cites a document outside the repository ("contract §", "gateway spec").
 * - Doors (lib/doors/<door>/, one per way in: docs/architecture.md, "Doors"): no stage and no
 *   lower floor imports a door, a door imports no stage (it reaches them through the pipeline),
 *   and a door imports no other door but doors/shared/.
 * - The stages and the floor they speak (stages/, command/, pipeline/) name no dialect: no
 *   `postgrest` and no `dialect` in code or comments (a citation of a docs/ page aside), so no
 *   branch on who asked can come back. pipeline/resolved-config.ts is the one exception: its keys
 *   are how the configuration picks a door.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

export const lowerFloors: readonly string[] = ['pipeline', 'command', 'db', 'http', 'config', 'schema', 'errors', 'sql', 'ops', 'describe'];

/** Folders that speak only the Command vocabulary, and the one file that may name a door (the configuration picks it). */
const doorBlind = /^(stages|command|pipeline)\//;
const namesTheDoors = 'pipeline/resolved-config.ts';
const DIALECT_WORD = /postgrest|dialect/i;
const DOCS_CITATION = /docs\/[\w./-]+\.md/g;

const IMPORT = /(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|import\s*\(\s*['"]([^'"]+)['"]\s*\)|import\s+['"]([^'"]+)['"]/g;
const OUTSIDE_CITATION = /contract §|gateway[- ]spec/gi;

export interface Layering {
  readonly files: number;
  readonly problems: readonly string[];
}

export function checkLayering(libRoot: string): Layering {
  const files = sourceFiles(libRoot);
  const rel = (file: string): string => path.relative(libRoot, file).split(path.sep).join('/');
  const graph = new Map<string, string[]>();
  const folderEdges = new Map<string, Map<string, string>>();
  const problems: string[] = [];
  for (const file of files) {
    const text = fs.readFileSync(file, 'utf8');
    const from = rel(file);
    const deps: string[] = [];
    for (const m of text.matchAll(IMPORT)) {
      const target = resolveImport(file, m[1] ?? m[2] ?? m[3] ?? '');
      if (target === undefined) continue;
      deps.push(target);
      const to = rel(target);
      if (lowerFloors.includes(from.split('/')[0]!) && to.startsWith('stages/')) problems.push(`${from} imports ${to} (a lower floor imports a stage)`);
      const [fromStage, toStage] = [stageOf(from), stageOf(to)];
      if (fromStage !== undefined && toStage !== undefined && fromStage !== toStage) problems.push(`${from} imports ${to} (a stage imports another stage)`);
      if (path.basename(from).includes('render') && /(^|\/)compile/.test(to)) problems.push(`${from} imports ${to} (render reads compile's internals)`);
      const [fromDoor, toDoor] = [doorOf(from), doorOf(to)];
      if (toDoor !== undefined && fromStage !== undefined) problems.push(`${from} imports ${to} (a stage imports a door)`);
      if (toDoor !== undefined && lowerFloors.includes(from.split('/')[0]!)) problems.push(`${from} imports ${to} (a lower floor imports a door)`);
      if (fromDoor !== undefined && toStage !== undefined) problems.push(`${from} imports ${to} (a door imports a stage)`);
      if (fromDoor !== undefined && toDoor !== undefined && fromDoor !== toDoor && toDoor !== 'shared') problems.push(`${from} imports ${to} (a door imports another door)`);
      const [fromFolder, toFolder] = [folderOf(from), folderOf(to)];
      if (fromFolder !== toFolder) {
        const edges = folderEdges.get(fromFolder) ?? new Map<string, string>();
        if (!edges.has(toFolder)) edges.set(toFolder, `${from} imports ${to}`);
        folderEdges.set(fromFolder, edges);
      }
    }
    graph.set(file, deps);
    if (doorBlind.test(from) && from !== namesTheDoors) {
      const named = text.replace(DOCS_CITATION, '').match(new RegExp(DIALECT_WORD.source, 'gi'));
      if (named) problems.push(`${from} names a dialect (${[...new Set(named.map((w) => w.toLowerCase()))].join(', ')}): stages speak only the Command vocabulary`);
    }
    const cites = text.match(OUTSIDE_CITATION);
    if (cites) problems.push(`${from} cites a document outside the repository (${cites.length}x)`);
  }
  for (const cycle of cyclesOf(graph)) problems.push(`import cycle: ${cycle.map(rel).join(' -> ')}`);
  const folderGraph = new Map([...folderEdges].map(([folder, edges]) => [folder, [...edges.keys()]]));
  for (const loop of cyclesOf(folderGraph)) {
    const inLoop = new Set(loop);
    const witnesses = loop.flatMap((folder) => [...(folderEdges.get(folder) ?? [])].filter(([to]) => inLoop.has(to)).map(([, why]) => why));
    problems.push(`folders import each other: ${loop.join(', ')} (${witnesses.join('; ')})`);
  }
  return { files: files.length, problems };
}

/** The folder an import's file belongs to, for the folder-level direction: see the header. */
function folderOf(relPath: string): string {
  const parts = relPath.split('/');
  if (parts.length === 1) return '.';
  return parts[0] === 'stages' || parts[0] === 'doors' ? `${parts[0]}/${parts[1]}` : parts[0]!;
}

function doorOf(relPath: string): string | undefined {
  return /^doors\/([^/]+)\//.exec(relPath)?.[1];
}

function stageOf(relPath: string): string | undefined {
  return /^stages\/([^/]+)\//.exec(relPath)?.[1];
}

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...sourceFiles(p));
    else if (/\.[cm]?ts$/.test(entry.name) && !entry.name.endsWith('.d.ts')) out.push(p);
  }
  return out.sort();
}

function resolveImport(from: string, spec: string): string | undefined {
  if (!spec.startsWith('.')) return undefined;
  const base = path.resolve(path.dirname(from), spec);
  for (const candidate of [base, `${base}.ts`, base.replace(/\.js$/, '.ts'), path.join(base, 'index.ts')]) {
    if (fs.existsSync(candidate) && fs.statSync(candidate).isFile()) return candidate;
  }
  return undefined;
}

/** The strongly connected components with more than one file (Tarjan), each one cycle to report. */
function cyclesOf(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) cycles.push(component.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return cycles;
}
