/**
 * Imports run downward (docs/architecture.md, "Which code may import what"). This test fails when
 * an import in lib/ breaks the layering, and checks the checker on a small tree of its own.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { checkLayering } from './check-layering';

describe('lib/ layering', () => {
  it('has no stage importing another stage, no lower floor importing a stage, no render importing compile, no cycle, no two folders importing each other, no outside citation', () => {
    const { files, problems } = checkLayering(path.resolve(__dirname, '../../../lib'));
    expect(files).toBeGreaterThan(100);
    expect(problems).toEqual([]);
  });
});

describe('checkLayering itself', () => {
  let root: string;
  const write = (file: string, text: string): void => {
    fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    fs.writeFileSync(path.join(root, file), text);
  };
  beforeEach(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'tablegate-layering-'));
    write('pipeline/plan.ts', 'export interface Plan { readonly x: number }\n');
    write('stages/compile/compile-list.ts', "import type { Plan } from '../../pipeline/plan';\nexport const listColumns = (p: Plan) => p.x;\n");
    write('stages/parse/parse-list.ts', "import type { Plan } from '../../pipeline/plan';\nexport type P = Plan;\n");
    write('http/render-result.ts', "import type { Plan } from '../pipeline/plan';\nexport type R = Plan;\n");
  });
  afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

  it('passes a tree whose imports run downward', () => {
    expect(checkLayering(root)).toEqual({ files: 4, problems: [] });
  });

  it('reports a stage importing another stage, even type-only and across lines', () => {
    write('stages/parse/parse-get.ts', "import type {\n  listColumns,\n} from '../compile/compile-list';\n");
    expect(checkLayering(root).problems).toEqual(['stages/parse/parse-get.ts imports stages/compile/compile-list.ts (a stage imports another stage)']);
  });

  it('reports db/, http/, config/ or the floor importing a stage, and render importing compile', () => {
    write('db/create-database.ts', "export { listColumns } from '../stages/compile/compile-list';\n");
    write('config/resolve-config.ts', "const m = import('../stages/parse/parse-list');\n");
    write('http/render-result.ts', "import { listColumns } from '../stages/compile/compile-list.js';\n");
    expect(checkLayering(root).problems).toEqual([
      'config/resolve-config.ts imports stages/parse/parse-list.ts (a lower floor imports a stage)',
      'db/create-database.ts imports stages/compile/compile-list.ts (a lower floor imports a stage)',
      'http/render-result.ts imports stages/compile/compile-list.ts (a lower floor imports a stage)',
      "http/render-result.ts imports stages/compile/compile-list.ts (render reads compile's internals)",
    ]);
  });

  it('reports a cycle made of type-only imports', () => {
    write('pipeline/plan.ts', "import type { Result } from './result';\nexport interface Plan { readonly r: Result }\n");
    write('pipeline/result.ts', "import type { Plan } from './plan';\nexport interface Result { readonly p?: Plan }\n");
    expect(checkLayering(root).problems).toEqual(['import cycle: pipeline/plan.ts -> pipeline/result.ts']);
  });

  it('reports two folders that import each other, and a loop of three, naming one import of each step', () => {
    write('config/resolved-config.ts', 'export interface ResolvedConfig { readonly x: number }\n');
    write('config/resolve-config.ts', "import type { Plan } from '../pipeline/plan';\nexport type C = Plan;\n");
    write('pipeline/stage-types.ts', "import type { ResolvedConfig } from '../config/resolved-config';\nexport type S = ResolvedConfig;\n");
    expect(checkLayering(root).problems).toEqual([
      'folders import each other: config, pipeline (config/resolve-config.ts imports pipeline/plan.ts; pipeline/stage-types.ts imports config/resolved-config.ts)',
    ]);
    write('pipeline/stage-types.ts', 'export type S = number;\n');
    write('db/create-pool.ts', "import type { ResolvedConfig } from '../config/resolved-config';\nexport type D = ResolvedConfig;\n");
    write('pipeline/database.ts', "import type { D } from '../db/create-pool';\nexport type P = D;\n");
    expect(checkLayering(root).problems).toEqual([
      'folders import each other: config, db, pipeline (config/resolve-config.ts imports pipeline/plan.ts; db/create-pool.ts imports config/resolved-config.ts; pipeline/database.ts imports db/create-pool.ts)',
    ]);
  });

  it('counts each stage as a folder of its own, and a parent folder with its subfolders as one', () => {
    write('stages/compile/compile-get.ts', "import type { Plan } from '../../pipeline/plan';\nexport type G = Plan;\n");
    write('http/postgrest/render.ts', "import { x } from '../digest';\nexport const y = x;\n");
    write('http/digest.ts', "import type { R } from './postgrest/types';\nexport const x = 1;\n");
    write('http/postgrest/types.ts', 'export type R = number;\n');
    expect(checkLayering(root).problems).toEqual([]);
  });

  it('reports a comment citing a document outside the repository', () => {
    write('errors/codes.ts', '/** The codes of contract §4 (see the gateway spec). */\nexport {};\n');
    expect(checkLayering(root).problems).toEqual(['errors/codes.ts cites a document outside the repository (2x)']);
  });

  it('reports a stage or a lower floor importing a door, a door importing a stage, and a door importing another door but shared/', () => {
    write('doors/shared/resolve-names.ts', 'export const resolve = 1;\n');
    write('doors/rest/parse-list.ts', "import { resolve } from '../shared/resolve-names';\nexport const list = resolve;\n");
    write('doors/other/parse.ts', "import { list } from '../rest/parse-list';\nexport const other = list;\n");
    write('stages/compile/compile-get.ts', "import { list } from '../../doors/rest/parse-list';\nexport const g = list;\n");
    write('describe/document.ts', "import { list } from '../doors/rest/parse-list';\nexport const d = list;\n");
    write('doors/other/render.ts', "import { listColumns } from '../../stages/compile/compile-list';\nexport const r = listColumns;\n");
    expect(checkLayering(root).problems).toEqual([
      'describe/document.ts imports doors/rest/parse-list.ts (a lower floor imports a door)',
      'doors/other/parse.ts imports doors/rest/parse-list.ts (a door imports another door)',
      "doors/other/render.ts imports stages/compile/compile-list.ts (render reads compile's internals)",
      'doors/other/render.ts imports stages/compile/compile-list.ts (a door imports a stage)',
      'stages/compile/compile-get.ts imports doors/rest/parse-list.ts (a stage imports a door)',
    ]);
  });

  it('reports a stage, command/ or pipeline/ file naming a dialect (a docs/ citation and the configuration aside)', () => {
    write('stages/execute/execute.ts', "export const run = (c: { dialect: string }) => c.dialect === 'postgrest';\n");
    write('command/command.ts', '/** A read (the PostgREST dialect). */\nexport interface ReadCommand { readonly postgrest?: true }\n');
    write('pipeline/plan.ts', '/** The plan (docs/postgrest-dialect.md, "Plans"). */\nexport interface Plan { readonly x: number }\n');
    write('pipeline/resolved-config.ts', "export interface ResolvedConfig { readonly dialect: 'tablegate' | 'postgrest' }\n");
    write('doors/postgrest/parse.ts', "export const dialect = 'postgrest';\n");
    expect(checkLayering(root).problems).toEqual([
      'command/command.ts names a dialect (postgrest, dialect): stages speak only the Command vocabulary',
      'stages/execute/execute.ts names a dialect (dialect, postgrest): stages speak only the Command vocabulary',
    ]);
  });
});
