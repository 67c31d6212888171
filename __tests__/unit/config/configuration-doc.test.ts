/**
 * docs/configuration.md is the user's reference for gw.toml; it must not drift from the key table
 * that the gateway actually validates against.
 */
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { accessKeys, gatewayKeys } from '../../../lib/config/config-keys';

const doc = readFileSync(path.join(__dirname, '../../../docs/configuration.md'), 'utf8');

/** The first-column keys of the table under a `## `[section]`` heading. */
function documentedKeys(section: string): string[] {
  const start = doc.indexOf(`## \`[${section}]\``);
  expect(start).toBeGreaterThanOrEqual(0);
  const rest = doc.slice(start + 1);
  const body = rest.slice(0, rest.search(/\n## /) === -1 ? undefined : rest.search(/\n## /));
  return [...body.matchAll(/^\| `([a-z_]+)` \|/gm)].map((m) => m[1]!);
}

describe('docs/configuration.md', () => {
  it('mentions every key of config-keys.ts in backticks', () => {
    const missing = [...gatewayKeys, ...accessKeys].map((k) => k.key).filter((key) => !doc.includes(`\`${key}\``));
    expect(missing).toEqual([]);
  });

  it('has a [gateway] table row for exactly the [gateway] keys, in table order', () => {
    expect(documentedKeys('gateway')).toEqual(gatewayKeys.map((k) => k.key));
  });

  it('has an [access] table row for exactly the [access] keys', () => {
    expect(documentedKeys('access')).toEqual(accessKeys.map((k) => k.key));
  });

  it('documents every default of the key table', () => {
    const rows = doc.split('\n');
    for (const key of gatewayKeys.filter((k) => k.default !== undefined && k.env === undefined)) {
      const row = rows.find((line) => line.startsWith(`| \`${key.key}\` |`)) ?? '';
      expect([key.key, row.includes(`\`${JSON.stringify(key.default)}\``)]).toEqual([key.key, true]);
    }
  });
});
