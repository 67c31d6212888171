/**
 * The messages of PostgreSQL's built-in `pgoutput` plugin, protocol version 1 (PostgreSQL manual,
 * §55.9 "Logical Replication Message Formats"), as read from pg_logical_slot_peek_binary_changes:
 * one message per row. Only what the feed uses is kept: Begin (the commit LSN and time), Relation
 * (schema, name, columns), Insert, Update, Delete (their tuples as column -> text, null or
 * unchanged TOAST), Commit (the LSN just past it). Truncate, Type, Origin and logical messages are
 * skipped. Never: interprets a value's text (the feed reads rows back through the list route).
 */

export interface RelationMessage {
  readonly tag: 'relation';
  readonly id: number;
  readonly schema: string;
  readonly name: string;
  readonly columns: readonly string[];
}

/** A column's value: its text, null, or `undefined` for an unchanged TOASTed value ('u'). */
export type TupleValue = string | null | undefined;

export type PgOutputMessage =
  | { readonly tag: 'begin'; readonly finalLsn: string; readonly commitTime: number }
  | { readonly tag: 'commit'; readonly endLsn: string }
  | RelationMessage
  | { readonly tag: 'insert'; readonly relation: number; readonly row: readonly TupleValue[] }
  | { readonly tag: 'update'; readonly relation: number; readonly old: readonly TupleValue[] | null; readonly row: readonly TupleValue[] }
  | { readonly tag: 'delete'; readonly relation: number; readonly old: readonly TupleValue[] }
  | { readonly tag: 'other' };

/** Microseconds from 1970-01-01 to 2000-01-01, PostgreSQL's timestamp epoch. */
const PG_EPOCH_US = 946_684_800_000_000n;

export function decodePgOutput(data: Buffer): PgOutputMessage {
  const r = new Reader(data);
  switch (String.fromCharCode(r.byte())) {
    case 'B': {
      const finalLsn = r.lsn();
      const commitTime = Number((r.int64() + PG_EPOCH_US) / 1000n);
      return { tag: 'begin', finalLsn, commitTime };
    }
    case 'C': {
      r.byte(); // flags
      r.lsn(); // the commit's own LSN (Begin's finalLsn)
      return { tag: 'commit', endLsn: r.lsn() };
    }
    case 'R': {
      const id = r.int32();
      const schema = r.cstring();
      const name = r.cstring();
      r.byte(); // replica identity setting
      const count = r.int16();
      const columns: string[] = [];
      for (let i = 0; i < count; i++) {
        r.byte(); // flags (1: part of the key)
        columns.push(r.cstring());
        r.int32(); // type oid
        r.int32(); // type modifier
      }
      return { tag: 'relation', id, schema, name, columns };
    }
    case 'I': {
      const relation = r.int32();
      r.byte(); // 'N'
      return { tag: 'insert', relation, row: r.tuple() };
    }
    case 'U': {
      const relation = r.int32();
      let kind = String.fromCharCode(r.byte());
      let old: TupleValue[] | null = null;
      if (kind === 'K' || kind === 'O') {
        old = r.tuple();
        kind = String.fromCharCode(r.byte());
      }
      return { tag: 'update', relation, old, row: r.tuple() };
    }
    case 'D': {
      const relation = r.int32();
      r.byte(); // 'K' (key columns only) or 'O' (the whole old row: REPLICA IDENTITY FULL)
      return { tag: 'delete', relation, old: r.tuple() };
    }
    default:
      return { tag: 'other' };
  }
}

class Reader {
  private at = 0;
  constructor(private readonly data: Buffer) {}

  byte(): number {
    return this.data.readUInt8(this.at++);
  }
  int16(): number {
    const v = this.data.readInt16BE(this.at);
    this.at += 2;
    return v;
  }
  int32(): number {
    const v = this.data.readInt32BE(this.at);
    this.at += 4;
    return v;
  }
  int64(): bigint {
    const v = this.data.readBigInt64BE(this.at);
    this.at += 8;
    return v;
  }
  /** An LSN as PostgreSQL writes it: `X/Y` in upper-case hex. */
  lsn(): string {
    const high = this.data.readUInt32BE(this.at);
    const low = this.data.readUInt32BE(this.at + 4);
    this.at += 8;
    return `${high.toString(16).toUpperCase()}/${low.toString(16).toUpperCase()}`;
  }
  cstring(): string {
    const end = this.data.indexOf(0, this.at);
    const s = this.data.toString('utf8', this.at, end);
    this.at = end + 1;
    return s;
  }
  tuple(): TupleValue[] {
    const count = this.int16();
    const values: TupleValue[] = [];
    for (let i = 0; i < count; i++) {
      const kind = String.fromCharCode(this.byte());
      if (kind === 'n') values.push(null);
      else if (kind === 'u') values.push(undefined);
      else {
        const length = this.int32();
        values.push(this.data.toString('utf8', this.at, this.at + length));
        this.at += length;
      }
    }
    return values;
  }
}
