/**
 * The `search_path` every request runs with, as PostgREST sets it: the exposed `schemas` in their
 * resolution order, then `extra_search_path`, each schema once (docs/security.md#the-tenant-context).
 *
 * In: schema names from the resolved configuration. Out: the setting's value, e.g.
 * `"api", "public"`, which the context statement binds as a parameter of
 * `set_config('search_path', $n, true)`. It is never SQL text. Every name is a double-quoted
 * identifier, so a name with capitals, spaces, commas or quotes stays exactly one schema
 * (PostgreSQL manual, "search_path": the value is a list of identifiers, parsed like SQL
 * identifiers; `"$user"` and `"pg_temp"` keep their special meaning when quoted).
 */
import { quoteIdent } from '../sql/sql';

export function searchPathOf(schemas: readonly string[], extra: readonly string[]): string {
  return [...new Set([...schemas, ...extra])].map(quoteIdent).join(', ');
}
