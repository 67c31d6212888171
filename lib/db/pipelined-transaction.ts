/**
 * One round trip per request. A node-postgres Submittable that writes, in one batch of
 * extended-protocol messages ending in a single Sync:
 *
 *   Parse/Bind/Execute  SELECT set_config('app.current_tenant_id', $1, true), ...
 *   Parse/Bind/Describe/Execute  <the plan's statement>
 *   Sync
 *
 * Messages before a Sync run as one implicit transaction (PostgreSQL docs §55.2.3, "Extended
 * Query"; §55.2.4 "Pipelining"): the transaction-local settings are in force for the statement,
 * any error aborts both and is rolled back at Sync, and nothing leaks to the next request. A
 * hand-written route needs four round trips (BEGIN, set_config, query, COMMIT) for the same.
 *
 * With `prepared_statements` on, both statements are named prepared statements parsed once per
 * connection (the plan's through a small LRU keyed by its text, whose values are all parameters),
 * so PostgreSQL skips parse and analysis; pgbench measured ~1.6x the statement rate of unnamed
 * statements for a 20-row list. Rows are kept as raw text: the statement already returns JSON.
 */
import { randomInt } from 'node:crypto';
import type { CompiledQuery } from '../sql/sql';
import { BinaryRowTap, type BinaryRows } from './binary-row-tap';

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
  readonly readOnly: boolean;
  /** Use named prepared statements (false behind poolers that cannot keep them). */
  readonly prepared: boolean;
  /** Ask for the plan statement's result columns in binary format (`x-gw-result-format: binary`). */
  readonly binaryResults?: boolean;
}

/** Per-connection prepared plan statements: text -> name, in least-recently-used order. */
interface StatementCache {
  readonly names: Map<string, string>;
  /** Names whose Parse may have failed; closed (a no-op if absent) before the next batch. */
  closeFirst: string[];
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
    cache = { names: new Map(), closeFirst: [] };
    caches.set(connection, cache);
  }
  return cache;
}

const contextText = (readOnly: boolean): string =>
  "SELECT set_config('app.current_tenant_id', $1, true), set_config('app.current_user_id', $2, true), " +
  "set_config('app.current_agent_id', $3, true), set_config('app.is_super_admin', 'false', true), " +
  `set_config('statement_timeout', $4, true)${readOnly ? ", set_config('transaction_read_only', 'on', true)" : ''}`;

const contextStatements = {
  ro: { name: 'tablegate_context_ro_v1', text: contextText(true) },
  rw: { name: 'tablegate_context_rw_v1', text: contextText(false) },
} as const;

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
}

/** The tenant-context statement as a plain query, for the (rare) multi-statement transactions. */
export function contextQuery(settings: Omit<TransactionSettings, 'prepared'>): CompiledQuery {
  return {
    text: contextText(settings.readOnly),
    values: [settings.tenantId, settings.userId, settings.agentId, String(settings.statementTimeoutMs)],
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
  private done = false;
  /** The plan statement this batch parsed, forgotten again if the batch fails. */
  private parsed: { cache: StatementCache; name: string } | undefined;

  constructor(
    private readonly settings: TransactionSettings,
    private readonly query: CompiledQuery,
    private readonly valueMapper: (v: unknown) => unknown,
    private readonly callback: (err: Error | null, result: BatchResult) => void,
  ) {
    const statement = settings.readOnly ? contextStatements.ro : contextStatements.rw;
    // Unnamed when prepared statements are off: pg then records nothing for this query.
    this.name = settings.prepared ? statement.name : '';
    this.text = statement.text;
  }

  submit(connection: Connection): null {
    const { settings } = this;
    if (settings.binaryResults) this.tap = new BinaryRowTap(connection.stream);
    connection.stream.cork?.();
    try {
      if (this.name === '' || connection.parsedStatements[this.name] !== this.text) {
        connection.parse({ text: this.text, name: this.name, types: [] });
      }
      connection.bind({
        portal: '',
        statement: this.name,
        values: [settings.tenantId, settings.userId, settings.agentId, String(settings.statementTimeoutMs)],
      });
      connection.execute({ portal: '', rows: 0 });
      const statement = settings.prepared ? this.preparedName(connection) : '';
      if (statement === '') connection.parse({ text: this.query.text, name: '', types: [] });
      connection.bind({ portal: '', statement, values: this.query.values, valueMapper: this.valueMapper, binary: settings.binaryResults === true });
      connection.describe({ type: 'P', name: '' });
      connection.execute({ portal: '', rows: 0 });
      connection.sync();
    } finally {
      connection.stream.uncork?.();
    }
    return null;
  }

  /** The plan statement's name on this connection, writing its Parse when it is new. */
  private preparedName(connection: Connection): string {
    const cache = cacheOf(connection);
    for (const name of cache.closeFirst) connection.close({ type: 'S', name });
    cache.closeFirst = [];
    const text = this.query.text;
    const known = cache.names.get(text);
    if (known !== undefined) {
      cache.names.delete(text);
      cache.names.set(text, known);
      return known;
    }
    if (cache.names.size >= maxPreparedStatements) {
      const [oldestText, oldestName] = cache.names.entries().next().value as [string, string];
      cache.names.delete(oldestText);
      connection.close({ type: 'S', name: oldestName });
    }
    const name = `tablegate_q${++statementCounter}`;
    connection.parse({ text, name, types: [] });
    cache.names.set(text, name);
    this.parsed = { cache, name };
    return name;
  }

  handleRowDescription(msg: { fields: { name: string; dataTypeID: number }[] }): void {
    this.fields = msg.fields.map((f) => ({ name: f.name, typeOid: f.dataTypeID }));
  }

  handleDataRow(msg: { fields: (string | null)[] }): void {
    // Only the plan's statement (the second) returns rows we want. In binary mode pg's text
    // decoding of the fields is lossy; the tap holds their bytes.
    if (this.statementIndex === 1 && !this.tap) this.rows.push(msg.fields);
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
      if (cache.names.get(this.query.text) === name) cache.names.delete(this.query.text);
      cache.closeFirst.push(name);
    }
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
    this.callback(null, this.tap ? { rows: [], binary: { fields: this.fields, rows: this.tap.rows } } : { rows: this.rows });
  }
}
