/**
 * catchStreamErrors: an exception thrown by a 'data' listener of a connection's socket becomes that
 * connection's error, never an uncaught exception that ends the process.
 *
 * In: the socket of a pg Client (`client.connection.stream`). Out: the socket's `emit`, wrapped for
 * 'data' events: a listener that throws destroys the socket with a StreamListenerError. pg's
 * Connection reports the socket's error to its Client, which fails the active query with it and
 * emits 'error' (lib/db/check-out.ts listens and discards the client). Never: lets the socket be
 * read on after a listener threw (the protocol parser's state is unknown then).
 *
 * Why (node-postgres 8, pg-protocol's parse(), pg/lib/connection.js): the backend messages are
 * parsed inside the socket's 'data' listener, and each DataRow field becomes a JavaScript string
 * there. A field over V8's string limit (~512 MiB) throws ERR_STRING_TOO_LONG from that listener,
 * which nothing catches. max_response_bytes makes PostgreSQL refuse such a value before sending it
 * (lib/stages/compile/size-checked.ts); this is the defence behind it, for anything else a
 * listener may throw (a value the check does not see, a bug of the driver or of the gateway's own
 * listeners: lib/db/raw-row-query.ts, lib/db/binary-row-tap.ts).
 */
type Emit = (event: string | symbol, ...args: unknown[]) => boolean;

interface Socket {
  emit: Emit;
  destroy(error?: Error): unknown;
}

/** What the request's query fails with: the listener's exception is its `cause`. */
export class StreamListenerError extends Error {
  constructor(override readonly cause: unknown) {
    super(`reading the database's answer failed: ${cause instanceof Error ? cause.message : String(cause)}`);
    this.name = 'StreamListenerError';
  }

  /** The answer held a value longer than V8 can make a string of. */
  get stringTooLong(): boolean {
    return (this.cause as { code?: unknown } | undefined)?.code === 'ERR_STRING_TOO_LONG';
  }
}

const wrapped = new WeakSet<object>();

export function catchStreamErrors(socket: Socket): void {
  if (wrapped.has(socket)) return;
  wrapped.add(socket);
  const emit = socket.emit;
  socket.emit = function emitCaught(this: Socket, event: string | symbol, ...args: unknown[]): boolean {
    if (event !== 'data') return emit.apply(this, [event, ...args]);
    try {
      return emit.apply(this, [event, ...args]);
    } catch (err) {
      socket.destroy(new StreamListenerError(err));
      return true;
    }
  };
}
