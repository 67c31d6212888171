/**
 * The methods each route shape serves, from the path alone: in, the decoded path segments below
 * the mount point; out, the methods for an `Allow` header, or undefined for a path that is no
 * route. Never looks at the schema or the caller, so an OPTIONS answer built from it tells an
 * unauthenticated client nothing about which tables exist (docs/security.md, "Browsers and CORS").
 * The lists are those of the parse stage's 405 answers; an integration test compares the two.
 */
export function routeMethods(segments: readonly string[]): readonly string[] | undefined {
  const [first, second, third] = segments;
  if (first === 'rpc' && second !== undefined && third === undefined) return ['POST'];
  if (first === '_rpc' && second === 'contracts' && third === undefined) return ['GET', 'HEAD'];
  if (first === undefined || first === 'rpc' || first === '_rpc' || segments.length > 3) return undefined;
  if (second === undefined) return ['GET', 'HEAD', 'POST'];
  if (third === undefined && (second === 'aggregate' || second === '_explain')) return ['GET', 'HEAD'];
  if (third === undefined) return ['GET', 'HEAD', 'PATCH', 'DELETE'];
  return ['GET', 'HEAD'];
}
