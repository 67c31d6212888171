/**
 * One round trip per request. A node-postgres Submittable that writes, in one batch of
 * extended-protocol messages ending in a single Sync:
 *
 *   Parse/Bind/Execute  SELECT set_config('app.current_tenant_id', $1, true), ...   (the context)
 *   [Parse/Bind/Execute  EXPLAIN (FORMAT JSON) <the rows counted>]                  (a count estimate)
 *   Parse/Bind/Describe/Execute  <the plan's statement>
 *   Bind/Execute  RESET ALL, RESET ROLE, DISCARD TEMP (not after a read), then       (the reset)
 *                 writes: the context statement again; reads: SELECT pg_advisory_unlock_all()
 *   Sync
 *
 * Messages before a Sync run as one implicit transaction (PostgreSQL docs §55.2.3, "Extended
 * Query"; §55.2.4 "Pipelining"): the transaction-local settings are in force for the statement,
 * and any error aborts the whole batch and is rolled back at Sync. A hand-written route needs four
 * round trips (BEGIN, set_config, query, COMMIT) for the same.
 *
 * Nothing carries over to the next request on the connection (docs/security.md, "What is reset
 * after each request"): a function may change session-level settings (`set_config(..., false)`,
 * `SET` without `LOCAL`, `SET ROLE`), create temporary tables or take session advisory locks. The
 * reset runs after the plan, so it cannot change its rows (they are sent, TimeZone applied, before
 * it runs), and only when the plan succeeded: after an error PostgreSQL itself undoes every setting
 * and temporary table made in the transaction. RESET ALL also clears the transaction-local
 * context, so after a write the context statement runs once more: deferred triggers fire at COMMIT
 * and must still see the caller's tenant and search_path (a READ ONLY transaction writes nothing,
 * so none fire). At COMMIT the local values end and the session is left at the role's defaults.
 * The context statement also releases session advisory locks, so a failed request's are released
 * when the next one starts; after a read the cheaper unlock statement does that alone.
 *
 * With `prepared_statements` on, every statement is a named prepared statement parsed once per
 * connection (the plan's through a small LRU keyed by its text, whose values are all parameters),
 * so PostgreSQL skips parse and analysis; pgbench measured ~1.6x the statement rate of unnamed
 * statements for a 20-row list. Rows are kept as raw text: the statement already returns JSON.
 */
import { randomInt } from 'node:crypto';
import type { CompiledQuery } from '../sql/sql';
import type { RequestSettings } from '../pipeline/database';
import { BinaryRowTap, type BinaryRows } from './binary-row-tap';
import { distributedContextStatements } from './distributed-context';

/** The subset of pg's internal Connection used here (pg/lib/connection.js). */
interface Connection {
  parsedStatements: Record<string, string>;
  stream: { cork?: () => void; uncork?: () => void } & ConstructorParameters<typeof BinaryRowTap>[0];
  parse(msg: { text: string; name: string; types: unknown[] }): void;
  close(msg: { type: 'S' | 'P'; name: string }): void;
  bind(msg: { portal: string; statement: string; values: readonly unknown[]; valueMapper?: (v: unknown) => unknown; binary?: boolean }): void;
  describe(msg: { type: 'P' | 'S'; name: string }): void;
  execute(msg: { portal: string; rows: number }): void;
  sync(): void;
}

export interface TransactionSettings {
  readonly tenantId: string;
  readonly userId: string;
  readonly agentId: string;
  readonly statementTimeoutMs: number;
  /** The `search_path` value (search-path.ts): exposed schemas, then extra_search_path. */
  readonly searchPath: string;
  readonly readOnly: boolean;
  /** Use named prepared statements (false behind poolers that cannot keep them). */
  readonly prepared: boolean;
  /** Ask for the plan statement's result columns in binary format (`x-gw-result-format: binary`). */
  readonly binaryResults?: boolean;
  /**
   * With binaryResults: the most bytes of rows the statement may send (max_response_bytes). Binary
   * results are not size-checked in SQL (several rows of any type), so the tap counts them from
   * the DataRows' headers and fails the connection before buffering more (binary-row-tap.ts).
   */
  readonly maxResultBytes?: number;
  /** Roll the transaction back after the plan statement (a dry run: `Prefer: tx=rollback`). */
  readonly rollback?: boolean;
  /** A door's `request.*` settings, set with the context (docs/architecture.md, "Doors"). */
  readonly request?: RequestSettings;
  /**
   * `Prefer: count=planned|estimated`: an EXPLAIN (FORMAT JSON) run after the context and before
   * the plan statement, so that it is planned as the caller, under its row-level security.
   */
  readonly estimate?: CompiledQuery;
  /** The database span's trace context, when tracing is on (docs/observability.md). */
  readonly trace?: { readonly traceId: string; readonly traceparent: string };
  /**
   * The database is a Citus coordinator (docs/citus.md): the batch is an explicit transaction
   * block (BEGIN ... COMMIT) whose context is also set by SET LOCAL, which Citus forwards to the
   * workers (distributed-context.ts). After a failed batch the block is left aborted: the
   * caller rolls it back before the connection is reused.
   */
  readonly distributed?: boolean;
}


/** Per-connection prepared plan statements: text -> name, in least-recently-used order. */
interface StatementCache {
  /**
   * Statement text -> its prepared name, least recently used first. The value keeps the text the
   * entry was made with: a hit re-inserts that string, not the request's equal copy, which would
   * otherwise be kept alive by this long-lived map and promoted to the old generation on every
   * request (docs/performance.md, "Where the CPU of a request goes").
   */
  readonly names: Map<string, { readonly text: string; readonly name: string }>;
  /** Names whose Parse may have failed; closed (a no-op if absent) before the next batch. */
  closeFirst: string[];
  /** Whether the reset statements are prepared: 'unknown' after a failed batch that parsed them. */
  reset: 'no' | 'yes' | 'unknown';
}

/** Bound on prepared statements per connection; each holds a plan in the server backend. */
export const maxPreparedStatements = 200;
const caches = new WeakMap<object, StatementCache>();
// Plan statement names count up from a random point per process: two gateway processes behind one
// pooler that passes named statements through (PgBouncer before 1.21) must never both mean
// `tablegate_q5`, or one could Bind the other's statement on a shared server connection.
let statementCounter = randomInt(2 ** 47);

function cacheOf(connection: Connection): StatementCache {
  let cache = caches.get(connection);
  if (!cache) {
    cache = { names: new Map(), closeFirst: [], reset: 'no' };
    caches.set(connection, cache);
  }
  return cache;
}

const contextText = (readOnly: boolean, request = false, trace = false): string =>
  "SELECT set_config('app.current_tenant_id', $1, true), set_config('app.current_user_id', $2, true), " +
  "set_config('app.current_agent_id', $3, true), set_config('app.is_super_admin', 'false', true), " +
  "set_config('statement_timeout', $4, true), set_config('search_path', $5, true), pg_advisory_unlock_all()" +
  (readOnly ? ", set_config('transaction_read_only', 'on', true)" : '') +
  // A door's time zone for the request (an empty value keeps the session's).
  (request ? ", set_config('request.jwt.claims', $6, true), set_config('request.method', $7, true), set_config('request.path', $8, true), set_config('request.headers', $9, true), set_config('timezone', coalesce(nullif($10, ''), current_setting('timezone')), true)" : '') +
  // Tracing (docs/observability.md, "The trace in PostgreSQL"): set beside the context, never in
  // the statement text, so prepared statements stay shared; application_name shows in
  // pg_stat_activity and log_line_prefix %a, and both revert at the end of the transaction.
  (trace ? `, set_config('tablegate.trace_id', $${request ? 11 : 6}, true), set_config('application_name', $${request ? 12 : 7}, true)` : '');

// Versioned names: a connection that prepared an older text must not run it under this name.
const contextStatements = {
  ro: { name: 'tablegate_context_ro_v2', text: contextText(true) },
  rw: { name: 'tablegate_context_rw_v2', text: contextText(false) },
  // With a door's request.* settings: the same, plus those.
  roRequest: { name: 'tablegate_context_ro_request_v2', text: contextText(true, true) },
  rwRequest: { name: 'tablegate_context_rw_request_v2', text: contextText(false, true) },
  // With tracing on: the same, plus the trace.
  roTrace: { name: 'tablegate_context_ro_trace_v1', text: contextText(true, false, true) },
  rwTrace: { name: 'tablegate_context_rw_trace_v1', text: contextText(false, false, true) },
  roRequestTrace: { name: 'tablegate_context_ro_request_trace_v2', text: contextText(true, true, true) },
  rwRequestTrace: { name: 'tablegate_context_rw_request_trace_v2', text: contextText(false, true, true) },
} as const;

function contextStatementOf(settings: Pick<TransactionSettings, 'readOnly' | 'request' | 'trace'>): { readonly name: string; readonly text: string } {
  if (settings.trace) {
    if (settings.request) return settings.readOnly ? contextStatements.roRequestTrace : contextStatements.rwRequestTrace;
    return settings.readOnly ? contextStatements.roTrace : contextStatements.rwTrace;
  }
  if (settings.request) return settings.readOnly ? contextStatements.roRequest : contextStatements.rwRequest;
  return settings.readOnly ? contextStatements.ro : contextStatements.rw;
}

/**
 * Back to the connection's defaults (connection-option, role and database defaults, else the
 * server's): RESET ALL resets every setting except `role` and `session_authorization`, so RESET
 * ROLE follows (a non-superuser cannot change the session authorization); DISCARD TEMP drops the
 * temporary tables a function created, rows and all. PostgreSQL manual, "RESET", "SET ROLE",
 * "DISCARD". In a batch they run in the plan's transaction, after it: a failed plan skips them.
 */
const resetStatements = [
  { name: 'tablegate_reset_all_v1', text: 'RESET ALL' },
  { name: 'tablegate_reset_role_v1', text: 'RESET ROLE' },
  { name: 'tablegate_discard_temp_v1', text: 'DISCARD TEMP' },
] as const;
/**
 * After a READ ONLY transaction: no DISCARD TEMP. PostgreSQL refuses CREATE TEMP TABLE in a
 * read-only transaction, from a function too, and the context statement makes it read-only
 * before any other statement runs (it can no longer be made read-write), so there is no temporary
 * table to drop; one message pair and one statement less per read (docs/performance.md).
 */
const resetAfterRead = resetStatements.filter((r) => r.text !== 'DISCARD TEMP');
const unlockStatement = { name: 'tablegate_unlock_v1', text: 'SELECT pg_advisory_unlock_all()' } as const;
const preparedResetStatements = [...resetStatements, unlockStatement];

/** The reset as one simple-protocol query, for a connection used outside a pipelined batch. */
export const sessionResetText = preparedResetStatements.map((r) => r.text).join('; ');

const contextValues = (settings: Omit<TransactionSettings, 'prepared'>): string[] => [
  settings.tenantId,
  settings.userId,
  settings.agentId,
  String(settings.statementTimeoutMs),
  settings.searchPath,
  ...(settings.request ? [settings.request.claims, settings.request.method, settings.request.path, settings.request.headers, settings.request.timeZone ?? ''] : []),
  ...(settings.trace ? [settings.trace.traceId, settings.trace.traceparent] : []),
];

export type Rows = (string | null)[][];

/** A column of the plan statement's result, from its RowDescription. */
export interface ResultField {
  readonly name: string;
  readonly typeOid: number;
}

/** What a batch returns: the text rows, or with `binaryResults` the fields and their raw bytes. */
export interface BatchResult {
  readonly rows: Rows;
  readonly binary?: { readonly fields: readonly ResultField[]; readonly rows: BinaryRows };
  /** With `settings.estimate`: the EXPLAIN's JSON text. */
  readonly estimate?: string;
}

/** The tenant-context statement as a plain query, for the (rare) multi-statement transactions. */
export function contextQuery(settings: Omit<TransactionSettings, 'prepared'>): CompiledQuery {
  return {
    text: contextStatementOf(settings).text,
    values: contextValues(settings),
  };
}

export class PipelinedTransaction {
  /**
   * pg's Client records `parsedStatements[name] = text` for the active query on ParseComplete;
   * the first ParseComplete of this batch is the context statement's, so exposing its name and
   * text here lets pg track that statement for us.
   */
  readonly name: string;
  readonly text: string;
  private readonly rows: Rows = [];
  private fields: ResultField[] = [];
  private tap: BinaryRowTap | undefined;
  private statementIndex = 0;
  /** Which statement of the batch is the plan's: after the context, and the estimate if any. */
  private readonly planIndex: number;
  /** On Citus: the SET LOCAL statements that carry the context to the workers. */
  private readonly distributedContext: readonly string[];
  private estimateText: string | undefined;
  private done = false;
  /** The plan statement this batch parsed, forgotten again if the batch fails. */
  private parsed: { cache: StatementCache; name: string } | undefined;
  /** Set when this batch parsed the reset statements. */
  private parsedReset: StatementCache | undefined;

  constructor(
    private readonly settings: TransactionSettings,
    private readonly query: CompiledQuery,
    private readonly valueMapper: (v: unknown) => unknown,
    private readonly callback: (err: Error | null, result: BatchResult) => void,
  ) {
    const statement = contextStatementOf(settings);
    // Unnamed when prepared statements are off: pg then records nothing for this query.
    this.name = settings.prepared ? statement.name : '';
    this.text = statement.text;
    this.distributedContext = settings.distributed ? distributedContextStatements(settings) : [];
    // On Citus, BEGIN and the SET LOCALs come before the estimate and the plan statement.
    this.planIndex = (settings.distributed ? 2 + this.distributedContext.length : 1) + (settings.estimate ? 1 : 0);
  }

  submit(connection: Connection): null {
    const { settings } = this;
    if (settings.binaryResults) this.tap = new BinaryRowTap(connection.stream, settings.maxResultBytes);
    connection.stream.cork?.();
    try {
      const context = contextValues(settings);
      if (this.name === '' || connection.parsedStatements[this.name] !== this.text) {
        connection.parse({ text: this.text, name: this.name, types: [] });
      }
      // Before any Execute, so that an error in the batch cannot skip these Parses.
      if (settings.prepared) this.prepareReset(connection);
      // Citus forwards SET LOCAL only inside a transaction block (distributed-context.ts).
      if (settings.distributed) this.unnamed(connection, 'BEGIN');
      connection.bind({ portal: '', statement: this.name, values: context });
      connection.execute({ portal: '', rows: 0 });
      for (const text of this.distributedContext) this.unnamed(connection, text);
      // Unnamed: asked for rarely, and its text differs with every filter.
      if (settings.estimate) {
        connection.parse({ text: settings.estimate.text, name: '', types: [] });
        connection.bind({ portal: '', statement: '', values: settings.estimate.values, valueMapper: this.valueMapper });
        connection.execute({ portal: '', rows: 0 });
      }
      const statement = settings.prepared ? this.preparedName(connection) : '';
      if (statement === '') connection.parse({ text: this.query.text, name: '', types: [] });
      connection.bind({ portal: '', statement, values: this.query.values, valueMapper: this.valueMapper, binary: settings.binaryResults === true });
      connection.describe({ type: 'P', name: '' });
      connection.execute({ portal: '', rows: 0 });
      // `Prefer: tx=rollback`: ROLLBACK ends the implicit transaction of the batch, undoing the
      // plan's writes (PostgreSQL answers with a WARNING "there is no transaction in progress",
      // and rolls back; src/backend/access/transam/xact.c, UserAbortTransactionBlock). What
      // follows runs in a new implicit transaction, committed at Sync.
      if (settings.rollback) {
        connection.parse({ text: 'ROLLBACK', name: '', types: [] });
        connection.bind({ portal: '', statement: '', values: [] });
        connection.execute({ portal: '', rows: 0 });
      }
      // The reset: skipped by PostgreSQL if anything before it failed.
      for (const reset of settings.readOnly ? resetAfterRead : resetStatements) this.run(connection, reset.name, reset.text, []);
      if (settings.readOnly) this.run(connection, unlockStatement.name, unlockStatement.text, []);
      else {
        this.run(connection, this.name, this.text, context);
        // RESET ALL reached the workers too; deferred triggers there see the context again.
        for (const text of this.distributedContext) this.unnamed(connection, text);
      }
      if (settings.distributed) this.unnamed(connection, 'COMMIT');
      connection.sync();
    } finally {
      connection.stream.uncork?.();
    }
    return null;
  }

  /** Bind and Execute of a statement without result columns we keep (parsed unnamed when not prepared). */
  private run(connection: Connection, name: string, text: string, values: readonly unknown[]): void {
    if (!this.settings.prepared) connection.parse({ text, name: '', types: [] });
    connection.bind({ portal: '', statement: this.settings.prepared ? name : '', values });
    connection.execute({ portal: '', rows: 0 });
  }

  /** Parse, Bind and Execute of an unnamed statement without parameters or rows we keep. */
  private unnamed(connection: Connection, text: string): void {
    connection.parse({ text, name: '', types: [] });
    connection.bind({ portal: '', statement: '', values: [] });
    connection.execute({ portal: '', rows: 0 });
  }

  /** Writes the Parse of the reset statements when this connection may not have them. */
  private prepareReset(connection: Connection): void {
    const cache = cacheOf(connection);
    if (cache.reset === 'yes') return;
    for (const reset of preparedResetStatements) {
      if (cache.reset === 'unknown') connection.close({ type: 'S', name: reset.name });
      connection.parse({ text: reset.text, name: reset.name, types: [] });
    }
    cache.reset = 'yes';
    this.parsedReset = cache;
  }

  /** The plan statement's name on this connection, writing its Parse when it is new. */
  private preparedName(connection: Connection): string {
    const cache = cacheOf(connection);
    if (cache.closeFirst.length > 0) {
      for (const name of cache.closeFirst) connection.close({ type: 'S', name });
      cache.closeFirst = [];
    }
    const text = this.query.text;
    const known = cache.names.get(text);
    if (known !== undefined) {
      cache.names.delete(known.text);
      cache.names.set(known.text, known);
      return known.name;
    }
    if (cache.names.size >= maxPreparedStatements) {
      const oldest = cache.names.values().next().value as { text: string; name: string };
      cache.names.delete(oldest.text);
      connection.close({ type: 'S', name: oldest.name });
    }
    const name = `tablegate_q${++statementCounter}`;
    connection.parse({ text, name, types: [] });
    cache.names.set(text, { text, name });
    this.parsed = { cache, name };
    return name;
  }

  handleRowDescription(msg: { fields: { name: string; dataTypeID: number }[] }): void {
    this.fields = msg.fields.map((f) => ({ name: f.name, typeOid: f.dataTypeID }));
  }

  handleDataRow(msg: { fields: (string | null)[] }): void {
    // Only the plan's statement (the second, or third after an estimate) returns rows we want. In
    // binary mode pg's text decoding of the fields is lossy; the tap holds their bytes.
    if (this.statementIndex === this.planIndex && !this.tap) this.rows.push(msg.fields);
    else if (this.settings.estimate && this.statementIndex === this.planIndex - 1) this.estimateText = msg.fields[0] ?? undefined;
  }

  handleCommandComplete(): void {
    this.statementIndex++;
  }

  handleEmptyQuery(): void {}

  handlePortalSuspended(): void {}

  handleCopyInResponse(): void {}

  handleCopyData(): void {}

  /** pg calls this instead of handleReadyForQuery when the batch fails; it is final. */
  handleError(err: Error): void {
    // The batch failed somewhere; the plan statement it parsed may not exist. Forget it, and
    // close the name before the next batch in case it does.
    if (this.parsed) {
      const { cache, name } = this.parsed;
      if (cache.names.get(this.query.text)?.name === name) cache.names.delete(this.query.text);
      cache.closeFirst.push(name);
    }
    if (this.parsedReset) this.parsedReset.reset = 'unknown';
    this.finish(err);
  }

  handleReadyForQuery(): void {
    this.finish(null);
  }

  private finish(err: Error | null): void {
    if (this.done) return;
    this.done = true;
    this.tap?.stop();
    if (err) return this.callback(err, { rows: [] });
    const estimate = this.estimateText === undefined ? {} : { estimate: this.estimateText };
    this.callback(null, this.tap ? { rows: [], binary: { fields: this.fields, rows: this.tap.rows }, ...estimate } : { rows: this.rows, ...estimate });
  }
}
