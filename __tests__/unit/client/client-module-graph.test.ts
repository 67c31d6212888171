/**
 * `tablegate/client` is for front-end bundles too (docs/client.md): its module graph, from
 * lib/client/index.ts, must stay inside lib/client and import no package and no Node built-in
 * (express, pg, node:*), nor use Node-only globals. Its copy of the error codes must equal the
 * gateway's catalogue. (The built package is checked at run time in
 * __tests__/integration/package-exports.test.ts.)
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { errorCatalogue } from '../../../lib/errors/error-catalogue';
import { clientOnlyErrorCodes, gatewayErrorCodes } from '../../../lib/client';

const clientDir = path.resolve(__dirname, '../../../lib/client');

/** Every file reachable from `entry` by import / export-from / import(), with each file's specifiers. */
function moduleGraph(entry: string): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  const visit = (file: string): void => {
    if (graph.has(file)) return;
    const text = fs.readFileSync(file, 'utf8');
    const specifiers = [...text.matchAll(/(?:import|export)\s[^'";]*?from\s*['"]([^'"]+)['"]|import\s*\(\s*['"]([^'"]+)['"]\s*\)|require\s*\(\s*['"]([^'"]+)['"]\s*\)|^import\s+['"]([^'"]+)['"]/gm)].map((m) => (m[1] ?? m[2] ?? m[3] ?? m[4])!);
    graph.set(file, specifiers);
    for (const s of specifiers) {
      if (!s.startsWith('.')) continue;
      const base = path.resolve(path.dirname(file), s);
      const target = [base, `${base}.ts`, path.join(base, 'index.ts')].find((c) => fs.existsSync(c) && fs.statSync(c).isFile());
      if (target) visit(target);
    }
  };
  visit(entry);
  return graph;
}

describe('the client module graph', () => {
  const graph = moduleGraph(path.join(clientDir, 'index.ts'));

  it('reaches every file of lib/client', () => {
    const files = fs.readdirSync(clientDir).filter((f) => f.endsWith('.ts')).map((f) => path.join(clientDir, f));
    expect([...graph.keys()].sort()).toEqual(files.sort());
  });

  it('imports only relative files inside lib/client: no package, no node: built-in, no server code', () => {
    const outside: string[] = [];
    for (const [file, specifiers] of graph) {
      for (const s of specifiers) {
        const inside = s.startsWith('.') && path.resolve(path.dirname(file), s).startsWith(clientDir + path.sep);
        if (!inside) outside.push(`${path.basename(file)} imports ${s}`);
      }
    }
    expect(outside).toEqual([]);
  });

  it('uses no Node-only global (Buffer, process, require, __dirname)', () => {
    for (const file of graph.keys()) {
      const code = fs.readFileSync(file, 'utf8').replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, '');
      expect({ file: path.basename(file), globals: code.match(/\b(Buffer|process|require|__dirname|__filename)\b/g) }).toEqual({ file: path.basename(file), globals: null });
    }
  });

  it('the check itself sees a server import', () => {
    const dir = fs.mkdtempSync(path.join(require('node:os').tmpdir(), 'tablegate-client-graph-'));
    try {
      fs.writeFileSync(path.join(dir, 'index.ts'), "export { a } from './a';\n");
      fs.writeFileSync(path.join(dir, 'a.ts'), "import type { Pool } from 'pg';\nimport { x } from '../../lib/create-gateway';\nexport const a = 1;\n");
      expect([...moduleGraph(path.join(dir, 'index.ts')).values()]).toEqual([['./a'], ['pg', '../../lib/create-gateway']]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("the client's error codes", () => {
  it("are the gateway's catalogue, in its order, plus codes the catalogue does not have", () => {
    expect([...gatewayErrorCodes]).toEqual(Object.keys(errorCatalogue));
    for (const code of clientOnlyErrorCodes) expect(Object.keys(errorCatalogue)).not.toContain(code);
  });
});
