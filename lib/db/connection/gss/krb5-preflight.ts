/**
 * Start-up checks for gss_provider=linux_krb5, so that a missing ticket shows up as a message with
 * the fix at createGateway instead of as failed connections later. In: the environment that MIT
 * Kerberos will read (KRB5_CONFIG, KRB5CCNAME, KRB5_CLIENT_KTNAME). Out: one line per problem,
 * each with the fix. Never: runs kinit or touches a cache (the gateway acquires no tickets).
 */
import fs from 'node:fs';

export function krb5Preflight(env: NodeJS.ProcessEnv): string[] {
  const problems: string[] = [];
  const config = env['KRB5_CONFIG'];
  if (config !== undefined && config !== '') {
    for (const file of config.split(':').filter((f) => f !== '')) {
      const text = readable(file);
      if (typeof text !== 'string') problems.push(`KRB5_CONFIG names ${file}, which cannot be read (${text.error}); point KRB5_CONFIG at a readable krb5.conf, or unset it to use /etc/krb5.conf`);
      else if (!/^\s*\[(libdefaults|realms|domain_realm)\]/m.test(text)) problems.push(`KRB5_CONFIG names ${file}, which is not a krb5.conf (no [libdefaults] or [realms] section); fix the file or point KRB5_CONFIG at the right one`);
    }
  }

  const keytabSpec = env['KRB5_CLIENT_KTNAME'];
  let keytabUsable = false;
  if (keytabSpec !== undefined && keytabSpec !== '') {
    const file = filePath(keytabSpec);
    if (file === undefined) {
      keytabUsable = true; // another keytab type (MEMORY:, ...): not checkable from here
    } else {
      const result = readable(file);
      keytabUsable = typeof result === 'string';
      if (!keytabUsable) problems.push(`KRB5_CLIENT_KTNAME names ${file}, which cannot be read (${(result as { error: string }).error}); give the path of a client keytab the gateway's user can read (ktadd -k <file> <principal>)`);
    }
  }

  const cacheSpec = env['KRB5CCNAME'];
  if (cacheSpec === undefined || cacheSpec === '') {
    if (keytabSpec === undefined || keytabSpec === '') {
      problems.push(
        'neither KRB5CCNAME (a credential cache) nor KRB5_CLIENT_KTNAME (a client keytab) is set, and the gateway never acquires tickets itself: ' +
          'set KRB5CCNAME=FILE:/path/to/ccache and fill it with `kinit -k -t <keytab> <principal>` (or a renewal sidecar such as k5start), or set KRB5_CLIENT_KTNAME=/path/to/client.keytab',
      );
    }
  } else {
    const typed = /^([A-Z]+):(.*)$/.exec(cacheSpec);
    const type = typed?.[1] ?? 'FILE';
    const location = typed?.[2] ?? cacheSpec;
    const present = type === 'FILE' ? fs.existsSync(location) : type === 'DIR' ? isDirectory(location) : true;
    if (!present && !keytabUsable) {
      problems.push(
        `KRB5CCNAME names ${type}:${location}, which does not exist, and no client keytab is set: the credential cache is empty and the gateway does not run kinit; ` +
          `fill it with \`KRB5CCNAME=${type}:${location} kinit -k -t <keytab> <principal>\` (or a renewal sidecar), or set KRB5_CLIENT_KTNAME to a client keytab`,
      );
    } else if (present && type === 'FILE') {
      const result = readable(location);
      if (typeof result !== 'string') problems.push(`KRB5CCNAME names ${location}, which cannot be read (${result.error}); make it readable by the gateway's user`);
    }
  }
  return problems;
}

function filePath(spec: string): string | undefined {
  const typed = /^([A-Z]+):(.*)$/.exec(spec);
  if (typed === null) return spec;
  return typed[1] === 'FILE' || typed[1] === 'WRFILE' ? typed[2] : undefined;
}

function readable(file: string): string | { error: string } {
  try {
    return fs.readFileSync(file, 'latin1');
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    return { error: typeof code === 'string' ? code : 'unreadable' };
  }
}

function isDirectory(dir: string): boolean {
  try {
    return fs.statSync(dir).isDirectory();
  } catch {
    return false;
  }
}
