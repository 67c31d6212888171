/**
 * The text of a file that a configuration key names (an allow-list, a policy). An unreadable file
 * is a GatewayConfigError naming the key, the path, the errno code and the fix: a gateway told to
 * enforce a file never starts without it.
 */
import fs from 'node:fs';
import { GatewayConfigError } from '../errors/gateway-config-error';

export function readConfiguredFile(path: string, key: string, label = key, fix = 'fix the path or remove the key'): string {
  try {
    return fs.readFileSync(path, 'utf8');
  } catch (err) {
    throw new GatewayConfigError(`${label}: cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? 'error'}); ${fix}`, key);
  }
}

/** The lines of a list file that say something: trimmed, without blank lines and `#` comments, with their 1-based numbers. */
export function significantLines(text: string): { readonly text: string; readonly number: number }[] {
  return text
    .split(/\r?\n/)
    .map((raw, i) => ({ text: raw.trim(), number: i + 1 }))
    .filter((line) => line.text !== '' && !line.text.startsWith('#'));
}
