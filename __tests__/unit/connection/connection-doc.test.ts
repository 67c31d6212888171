/** docs/configuration.md lists exactly the database_url parameters the gateway accepts, in table order. */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { connectionParameters } from '../../../lib/db/connection/connection-parameters';

const doc = readFileSync(path.join(__dirname, '../../../docs/configuration.md'), 'utf8');

describe('docs/configuration.md, `database_url` parameters', () => {
  it('has a row for exactly the accepted parameters', () => {
    const start = doc.indexOf('## `database_url` parameters');
    expect(start).toBeGreaterThanOrEqual(0);
    const rest = doc.slice(start + 1);
    const body = rest.slice(0, rest.search(/\n## /));
    const rows = [...body.matchAll(/^\| `([a-z0-9_]+)` \|/gm)].map((m) => m[1]);
    expect(rows).toEqual(connectionParameters.map((p) => p.name));
  });

  it('gives each parameter with a libpq environment variable that variable', () => {
    for (const p of connectionParameters.filter((q) => q.env !== undefined)) {
      const row = doc.split('\n').find((line) => line.startsWith(`| \`${p.name}\` |`)) ?? '';
      expect([p.name, row.includes(`env \`${p.env}\``)]).toEqual([p.name, true]);
    }
  });
});
