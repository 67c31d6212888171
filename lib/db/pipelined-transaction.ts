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
 * The context statement has constant text, so it is a named prepared statement parsed once per
 * connection. Rows are kept as raw text: the statement already returns JSON text.
 */
import type { CompiledQuery } from '../sql/sql';

/** The subset of pg's internal Connection used here (pg/lib/connection.js). */
interface Connection {
  parsedStatements: Record<string, string>;
  stream: { cork?: () => void; uncork?: () => void };
  parse(msg: { text: string; name: string; types: unknown[] }): void;
  bind(msg: { portal: string; statement: string; values: readonly unknown[]; valueMapper?: (v: unknown) => unknown }): void;
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

export class PipelinedTransaction {
  /**
   * pg's Client records `parsedStatements[name] = text` for the active query on ParseComplete;
   * the first ParseComplete of this batch is the context statement's, so exposing its name and
   * text here lets pg track that statement for us.
   */
  readonly name: string;
  readonly text: string;
  private readonly rows: Rows = [];
  private statementIndex = 0;
  private done = false;

  constructor(
    private readonly settings: TransactionSettings,
    private readonly query: CompiledQuery,
    private readonly valueMapper: (v: unknown) => unknown,
    private readonly callback: (err: Error | null, rows: Rows) => void,
  ) {
    const statement = settings.readOnly ? contextStatements.ro : contextStatements.rw;
    this.name = statement.name;
    this.text = statement.text;
  }

  submit(connection: Connection): null {
    const { settings } = this;
    connection.stream.cork?.();
    try {
      if (connection.parsedStatements[this.name] !== this.text) {
        connection.parse({ text: this.text, name: this.name, types: [] });
      }
      connection.bind({
        portal: '',
        statement: this.name,
        values: [settings.tenantId, settings.userId, settings.agentId, String(settings.statementTimeoutMs)],
      });
      connection.execute({ portal: '', rows: 0 });
      connection.parse({ text: this.query.text, name: '', types: [] });
      connection.bind({ portal: '', statement: '', values: this.query.values, valueMapper: this.valueMapper });
      connection.describe({ type: 'P', name: '' });
      connection.execute({ portal: '', rows: 0 });
      connection.sync();
    } finally {
      connection.stream.uncork?.();
    }
    return null;
  }

  handleRowDescription(): void {}

  handleDataRow(msg: { fields: (string | null)[] }): void {
    // Only the plan's statement (the second) returns rows we want.
    if (this.statementIndex === 1) this.rows.push(msg.fields);
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
    this.finish(err, []);
  }

  handleReadyForQuery(): void {
    this.finish(null, this.rows);
  }

  private finish(err: Error | null, rows: Rows): void {
    if (this.done) return;
    this.done = true;
    this.callback(err, rows);
  }
}
