/**
 * Fail open, but say so: at `ready`, one warning lists the exposed relations that row-level
 * security does not fully cover. The gateway still serves them; the database decides.
 *
 * - Tables (and partitioned tables) need RLS both enabled and forced (`relrowsecurity`,
 *   `relforcerowsecurity`): without FORCE the table's owner bypasses the policies.
 * - Materialized views and foreign tables cannot have RLS at all (PostgreSQL refuses
 *   `ENABLE ROW LEVEL SECURITY` on them).
 * - Views have no RLS of their own: their base tables' policies apply, checked as the view's owner
 *   unless the view has `security_invoker = true` (PostgreSQL 15+), so views lacking it are listed.
 *
 * Only relations the connected role holds a privilege on (SELECT, INSERT, UPDATE or DELETE, on the
 * table or any column) are listed: one it cannot touch is answered with 403 whatever its RLS, and
 * the documented advice is to grant only tables that have policies.
 *
 * Catalogs: pg_class (https://www.postgresql.org/docs/current/catalog-pg-class.html); CREATE VIEW
 * `security_invoker` (https://www.postgresql.org/docs/current/sql-createview.html); RLS and owners
 * (https://www.postgresql.org/docs/current/ddl-rowsecurity.html).
 */
import createDebug from 'debug';
import type { Queryable } from '../schema/introspect';
import type { SchemaCache, Table } from '../schema/schema-types';

const debug = createDebug('tablegate:rls');

/** What keeps a relation from being covered by row-level security. */
export type RowSecurityGap =
  /** Table or partitioned table with `relrowsecurity` false. */
  | 'not-enabled'
  /** Table or partitioned table with RLS enabled but `relforcerowsecurity` false. */
  | 'not-forced'
  /** Materialized view: RLS cannot be enabled on it. */
  | 'materialized-view'
  /** Foreign table: RLS cannot be enabled on it. */
  | 'foreign-table'
  /** View without `security_invoker = true`: base tables are checked as the view's owner. */
  | 'view-without-security-invoker';

export interface RowSecurityFinding {
  readonly schema: string;
  readonly name: string;
  readonly kind: Table['kind'];
  readonly gap: RowSecurityGap;
}

export interface RowSecurityReport {
  /** Tables, partitioned tables, materialized views and foreign tables, in schema-cache order. */
  readonly tables: readonly RowSecurityFinding[];
  /** Views without `security_invoker = true`, in schema-cache order. */
  readonly views: readonly RowSecurityFinding[];
}

/** Per-relation facts the schema cache does not hold, read by `checkRowSecurity`. */
export interface RelationAccess {
  /** `security_invoker` reloption of a view (false when unset, and for every other kind). */
  readonly securityInvoker: boolean;
  /** The connected role holds SELECT, INSERT, UPDATE or DELETE on the relation or one of its columns. */
  readonly reachable: boolean;
}

// `option_value::boolean` parses the reloption the way PostgreSQL does ('true', 'on', 'yes', '1'...).
// has_*_privilege() return NULL for an oid dropped since discovery: such a relation is skipped.
const ACCESS_SQL = `
SELECT c.oid,
       COALESCE((SELECT o.option_value::boolean
                 FROM pg_catalog.pg_options_to_table(c.reloptions) AS o
                 WHERE o.option_name = 'security_invoker'), false) AS security_invoker,
       COALESCE(pg_catalog.has_any_column_privilege(c.oid, 'SELECT, INSERT, UPDATE')
                OR pg_catalog.has_table_privilege(c.oid, 'DELETE'), false) AS reachable
FROM pg_catalog.pg_class c
WHERE c.oid = ANY($1::oid[])`;

/** Reads what `findRowSecurityGaps` needs beyond the schema cache (one query) and returns the gaps. */
export async function checkRowSecurity(db: Queryable, schema: SchemaCache): Promise<RowSecurityReport> {
  const oids = schema.tables.map((t) => t.oid);
  if (oids.length === 0) return { tables: [], views: [] };
  const { rows } = await db.query(ACCESS_SQL, [oids]);
  const access = new Map<number, RelationAccess>();
  // Explicit conversions: a host pool may carry its own type parsers (e.g. oid as string).
  for (const r of rows) access.set(Number(r.oid), { securityInvoker: r.security_invoker === true, reachable: r.reachable === true });
  return findRowSecurityGaps(schema.tables, access);
}

/** Pure: the gaps of `tables`, given each one's access facts (a table missing from `access` is skipped). */
export function findRowSecurityGaps(tables: readonly Table[], access: ReadonlyMap<number, RelationAccess>): RowSecurityReport {
  const found: RowSecurityFinding[] = [];
  const views: RowSecurityFinding[] = [];
  for (const table of tables) {
    const facts = access.get(table.oid);
    if (facts === undefined || !facts.reachable) continue;
    const gap = gapOf(table, facts);
    if (gap === undefined) continue;
    const finding: RowSecurityFinding = { schema: table.schema, name: table.name, kind: table.kind, gap };
    (table.kind === 'v' ? views : found).push(finding);
  }
  return { tables: found, views };
}

function gapOf(table: Table, facts: RelationAccess): RowSecurityGap | undefined {
  switch (table.kind) {
    case 'v':
      return facts.securityInvoker ? undefined : 'view-without-security-invoker';
    case 'm':
      return 'materialized-view';
    case 'f':
      return 'foreign-table';
    default:
      if (!table.rlsEnabled) return 'not-enabled';
      return table.rlsForced ? undefined : 'not-forced';
  }
}

const GAP_TEXT: Record<RowSecurityGap, string> = {
  'not-enabled': 'RLS not enabled',
  'not-forced': 'RLS enabled but not forced (the table owner bypasses it)',
  'materialized-view': 'materialized view; RLS cannot apply (it holds every row its owner saw at the last REFRESH)',
  'foreign-table': 'foreign table; RLS cannot be enabled on it',
  'view-without-security-invoker': 'security_invoker not set',
};

/** Pure: the warning text (several lines), or undefined when there is nothing to report. */
export function formatRowSecurityWarning(report: RowSecurityReport): string | undefined {
  const count = report.tables.length + report.views.length;
  if (count === 0) return undefined;
  const line = (f: RowSecurityFinding): string => `    ${qualifiedName(f)}: ${GAP_TEXT[f.gap]}`;
  const lines = [
    `tablegate: WARNING: ${count} exposed ${count === 1 ? 'relation is' : 'relations are'} not covered by row-level security ` +
      '(enabled and forced); the gateway serves them anyway, and callers may see rows of other tenants through them:',
  ];
  if (report.tables.length > 0) lines.push('  tables:', ...report.tables.map(line));
  if (report.views.length > 0) {
    lines.push('  views (RLS applies only through their base tables; use security_invoker = true on PostgreSQL 15+):', ...report.views.map(line));
  }
  return lines.join('\n');
}

/** `schema.name`, each part double-quoted only when it is not a plain lower-case identifier. */
function qualifiedName(f: { schema: string; name: string }): string {
  return `${ident(f.schema)}.${ident(f.name)}`;
}

function ident(name: string): string {
  if (/^[a-z_][a-z0-9_$]*$/.test(name)) return name;
  // Control characters are escaped, so a crafted name cannot forge log lines.
  const quoted = name.replace(/"/g, '""').replace(/[\u0000-\u001f\u007f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return `"${quoted}"`;
}

/**
 * Called once at `ready`: logs the warning (console.warn, like the role check) when there is one.
 * Never throws: a failed check is itself reported as a warning, and the gateway still starts.
 */
export async function warnAboutRowSecurity(db: Queryable, schema: SchemaCache): Promise<void> {
  let report: RowSecurityReport;
  try {
    report = await checkRowSecurity(db, schema);
  } catch (err) {
    console.warn(`tablegate: WARNING: could not check row-level security of the exposed tables: ${err instanceof Error ? err.message : String(err)}`);
    return;
  }
  debug('row-level security gaps: %d tables, %d views', report.tables.length, report.views.length);
  const warning = formatRowSecurityWarning(report);
  if (warning !== undefined) console.warn(warning);
}
