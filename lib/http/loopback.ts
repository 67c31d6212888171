/**
 * Loopback checks for the dev-mode rules (docs/security.md, "Dev mode"): dev headers are honoured only from a
 * loopback peer, and dev mode binds only to a loopback address.
 */
import net from 'node:net';

/** 127.0.0.0/8 or ::1, also IPv4-mapped (`::ffff:127.0.0.1`) and bracketed (`[::1]`). */
export function isLoopbackAddress(address: string | undefined): boolean {
  if (!address) return false;
  const a = address.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  if (a === '::1') return true;
  const v4 = a.startsWith('::ffff:') ? a.slice(7) : a;
  return net.isIPv4(v4) && v4.startsWith('127.');
}

/** A bind host that only loopback peers can reach: a loopback address or the name localhost. */
export function isLoopbackHost(host: string): boolean {
  return host.toLowerCase() === 'localhost' || isLoopbackAddress(host);
}

/** `host:port` with an optional bracketed IPv6 host -> parts (host unbracketed), or undefined. */
export function parseBind(bind: string): { host: string; port: number } | undefined {
  const match = /^(\[[0-9A-Fa-f:.]+\]|[^\s:[\]]+):(\d{1,5})$/.exec(bind);
  if (match === null) return undefined;
  const port = Number(match[2]);
  return port <= 65535 ? { host: match[1]!.replace(/^\[(.*)\]$/, '$1'), port } : undefined;
}
