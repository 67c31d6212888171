/**
 * The change source (docs/change-feed.md, "The source"): reads committed transactions from a
 * logical replication slot with PostgreSQL's built-in `pgoutput` plugin, through the SQL
 * functions (pg_logical_slot_peek_binary_changes, pg_replication_slot_advance) on one session
 * connection of its own, polled every `poll_interval_ms`.
 *
 * A batch is handed on, and awaited, before the slot is advanced past it: if PostgreSQL restarts
 * or the connection drops in between, the same transactions come again and are skipped by their
 * commit LSN (never delivered twice); nothing is advanced past before it was delivered (never
 * lost). Reconnects with backoff (100 ms doubling to 5 s).
 * In: a connection factory, the slot and publication names. Out: transactions in commit order.
 * Never: writes to the database beyond the slot it owns, or lets a connection error escape.
 */
import type pg from 'pg';
import { GatewayConfigError } from '../../errors/gateway-config-error';
import { decodePgOutput, type RelationMessage, type TupleValue } from './decode-pgoutput';
import { eventId, lsnKey, lsnText } from './event-position';

export interface RowChange {
  /** The event id: commit LSN and index in the transaction (event-position.ts). */
  readonly id: string;
  readonly op: 'insert' | 'update' | 'delete';
  readonly schema: string;
  readonly table: string;
  readonly columns: readonly string[];
  /** The row after an insert or update; null for a delete. */
  readonly row: readonly TupleValue[] | null;
  /** The row before an update or delete: all columns with REPLICA IDENTITY FULL, else the key's only (or null). */
  readonly old: readonly TupleValue[] | null;
  /** When its transaction committed, ms since 1970. */
  readonly commitTime: number;
}

export interface ChangeTransaction {
  /** The commit LSN as 16 hex digits. */
  readonly lsnKey: string;
  /** Commit time, ms since 1970. */
  readonly commitTime: number;
  readonly changes: readonly RowChange[];
}

export interface ChangeSourceOptions {
  readonly connect: () => Promise<pg.Client>;
  readonly slot: string;
  readonly publication: string;
  readonly pollIntervalMs: number;
  /** Stop decoding after about this many changes (whole transactions): one batch's bound. */
  readonly batchChanges: number;
  /** Called with each batch (possibly empty after a poll found nothing); awaited before the next. */
  readonly onBatch: (transactions: readonly ChangeTransaction[]) => Promise<void>;
  readonly log: (message: string) => void;
}

export class ChangeSource {
  private client: pg.Client | undefined;
  private stopped = false;
  private loop: Promise<void> | undefined;
  /** The last delivered transaction's commit LSN key: anything at or below it was sent. */
  private delivered = '';
  /** How far the slot was advanced (16 hex digits). */
  private advanced = '';
  private readonly relations = new Map<number, RelationMessage>();
  private wake: (() => void) | undefined;
  /** Consecutive failures, for the backoff. */
  private failures = 0;
  connected = false;

  constructor(private readonly options: ChangeSourceOptions) {}

  /**
   * Connects, checks what the source needs (wal_level, the role, the publication) and makes the
   * slot when it is missing. Resolves with the slot's position: every change committed after it
   * will be delivered. Rejects with a GatewayConfigError that names the fix.
   */
  async start(): Promise<string> {
    const client = await this.options.connect();
    try {
      const position = await this.prepare(client);
      this.client = client;
      this.connected = true;
      this.advanced = position;
      this.loop = this.run();
      return position;
    } catch (err) {
      await client.end().catch(() => undefined);
      throw err;
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    await this.loop;
    await this.client?.end().catch(() => undefined);
    this.client = undefined;
  }

  private async prepare(client: pg.Client): Promise<string> {
    const { rows } = await client.query<{ wal_level: string; replication: boolean; publication: boolean }>(
      `SELECT current_setting('wal_level') AS wal_level,
              (SELECT rolreplication OR rolsuper FROM pg_roles WHERE rolname = current_user) AS replication,
              EXISTS (SELECT 1 FROM pg_publication WHERE pubname = $1) AS publication`,
      [this.options.publication],
    );
    const facts = rows[0]!;
    if (facts.wal_level !== 'logical') {
      throw new GatewayConfigError(`change_feed needs wal_level = logical on the database server (it is ${facts.wal_level}); set it in postgresql.conf and restart PostgreSQL (docs/change-feed.md)`, 'changeFeed');
    }
    if (!facts.replication) {
      throw new GatewayConfigError('change_feed reads a replication slot: its connection (change_feed.database_url, else database_url) needs a role with the REPLICATION attribute (docs/change-feed.md)', 'changeFeed.databaseUrl');
    }
    if (!facts.publication) {
      throw new GatewayConfigError(`change_feed: the publication "${this.options.publication}" does not exist; run \`tablegate install-change-feed\` as the database owner (docs/change-feed.md)`, 'changeFeed.publication');
    }
    const slot = await client.query<{ lsn: string | null; plugin: string }>('SELECT confirmed_flush_lsn::text AS lsn, plugin FROM pg_replication_slots WHERE slot_name = $1', [this.options.slot]);
    const found = slot.rows[0];
    if (found !== undefined) {
      if (found.plugin !== 'pgoutput') throw new GatewayConfigError(`change_feed: the replication slot "${this.options.slot}" uses the plugin ${found.plugin}, not pgoutput; drop it or set change_feed.slot_name`, 'changeFeed.slotName');
      if (found.lsn !== null) return lsnKey(found.lsn);
    }
    const made = await client.query<{ lsn: string }>("SELECT lsn::text AS lsn FROM pg_create_logical_replication_slot($1, 'pgoutput')", [this.options.slot]);
    this.options.log(`created replication slot ${this.options.slot}`);
    return lsnKey(made.rows[0]!.lsn);
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      let full = false;
      try {
        this.client ??= await this.reconnect();
        full = await this.poll(this.client);
        this.failures = 0;
      } catch (err) {
        if (this.stopped) break;
        this.connected = false;
        this.options.log(`change source: ${err instanceof Error ? err.message : String(err)}; reconnecting`);
        const lost = this.client;
        this.client = undefined;
        await lost?.end().catch(() => undefined);
        await this.sleep(Math.min(5000, 100 * 2 ** this.failures++));
        continue;
      }
      if (!full) await this.sleep(this.options.pollIntervalMs);
    }
  }

  private async reconnect(): Promise<pg.Client> {
    const client = await this.options.connect();
    client.on('error', () => undefined); // surfaces as the failing query's error
    this.connected = true;
    return client;
  }

  /** One peek, delivery and advance. True when the batch was cut at `batchChanges` (poll again at once). */
  private async poll(client: pg.Client): Promise<boolean> {
    const { slot, publication, batchChanges } = this.options;
    // Everything committed up to the flushed WAL position read first is decoded below, so an
    // empty answer lets the slot move there (WAL of unpublished tables is then not retained).
    const flushed = (await client.query<{ lsn: string }>('SELECT pg_current_wal_flush_lsn()::text AS lsn')).rows[0]!.lsn;
    const { rows } = await client.query<{ data: Buffer }>(
      "SELECT data FROM pg_logical_slot_peek_binary_changes($1, $2::pg_lsn, $3, 'proto_version', '1', 'publication_names', $4)",
      [slot, flushed, batchChanges, quoteIdent(publication)],
    );
    const transactions: ChangeTransaction[] = [];
    let open: { lsnKey: string; commitTime: number; changes: RowChange[] } | undefined;
    let lastEnd: string | undefined;
    let count = 0;
    for (const { data } of rows) {
      const m = decodePgOutput(data);
      switch (m.tag) {
        case 'begin':
          open = { lsnKey: lsnKey(m.finalLsn), commitTime: m.commitTime, changes: [] };
          break;
        case 'commit':
          if (open && open.lsnKey > this.delivered && open.changes.length > 0) transactions.push(open);
          open = undefined;
          lastEnd = lsnKey(m.endLsn);
          break;
        case 'relation':
          this.relations.set(m.id, m);
          break;
        case 'insert':
        case 'update':
        case 'delete': {
          count++;
          const rel = this.relations.get(m.relation);
          if (!open || !rel) break;
          open.changes.push({
            id: eventId(open.lsnKey, open.changes.length),
            op: m.tag,
            schema: rel.schema,
            table: rel.name,
            columns: rel.columns,
            row: m.tag === 'delete' ? null : m.row,
            old: m.tag === 'insert' ? null : m.old,
            commitTime: open.commitTime,
          });
          break;
        }
        case 'other':
          break;
      }
    }
    await this.options.onBatch(transactions);
    const last = transactions[transactions.length - 1];
    if (last) this.delivered = last.lsnKey;
    const full = count >= batchChanges;
    const to = full ? lastEnd : lsnKey(flushed);
    if (to !== undefined && to > this.advanced) {
      await client.query('SELECT pg_replication_slot_advance($1, $2::pg_lsn)', [slot, lsnText(to)]);
      this.advanced = to;
    }
    return full;
  }

  private sleep(ms: number): Promise<void> {
    if (this.stopped) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      this.wake = done;
    });
  }
}

/** publication_names is a list of identifiers: one, double-quoted. */
function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
