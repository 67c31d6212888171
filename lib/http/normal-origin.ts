/**
 * One configured CORS origin (`[gateway] cors_origins`) -> the origin as a browser sends it in
 * its Origin header, or undefined when it is none. Never throws; the caller makes the error.
 */

/**
 * The origin as a browser sends it (`scheme://host[:port]`, lower-case host, no default port, no
 * path), or undefined when `value` is not an http(s) origin. A listed value that differs from
 * this would never match a request, so it is an error rather than a silent miss.
 */
export function normalOrigin(value: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
  if (url.username !== '' || url.password !== '') return undefined;
  return url.origin;
}
