/**
 * Cancels the statement a checked-out client is running: a CancelRequest (PostgreSQL manual,
 * "Canceling Requests in Progress") on a new connection to the server that client is connected
 * to, keyed by the backend's process ID and secret key from its BackendKeyData.
 * In: the busy client. Out: a promise that settles once the server (or pooler) closed the
 * connection, which it does after passing the request on, or after a second; it never rejects. Never: touches the busy
 * connection itself, or sends anything but the 16-byte request.
 *
 * The address is the busy socket's peer (the same server, also behind a DNS name with several
 * addresses or a pooler such as PgBouncer, which forwards the cancel to the right backend), else
 * the client's host and port (a Unix socket). No TLS: the server reads a CancelRequest before
 * any authentication or encryption, and it carries no secret beyond the key.
 */
import net from 'node:net';
import type pg from 'pg';

interface ClientKeys {
  readonly processID?: number | null;
  readonly secretKey?: number | null;
  readonly host?: string;
  readonly port?: number;
  readonly connection?: { readonly stream?: { readonly remoteAddress?: string; readonly remotePort?: number } };
}

/** CancelRequest code: 1234 in the high 16 bits, 5678 in the low 16 bits. */
const cancelRequestCode = 80877102;

export function sendCancel(client: pg.ClientBase): Promise<void> {
  const keys = client as unknown as ClientKeys;
  if (typeof keys.processID !== 'number' || typeof keys.secretKey !== 'number') return Promise.resolve();
  const message = Buffer.alloc(16);
  message.writeInt32BE(16, 0);
  message.writeInt32BE(cancelRequestCode, 4);
  message.writeInt32BE(keys.processID, 8);
  message.writeInt32BE(keys.secretKey, 12);
  const peer = keys.connection?.stream;
  const options: net.NetConnectOpts =
    peer?.remoteAddress !== undefined && peer.remotePort !== undefined
      ? { host: peer.remoteAddress, port: peer.remotePort }
      : keys.host?.startsWith('/')
        ? { path: `${keys.host}/.s.PGSQL.${keys.port ?? 5432}` }
        : { host: keys.host ?? 'localhost', port: keys.port ?? 5432 };
  return new Promise((resolve) => {
    const socket = net.connect(options);
    const done = (): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve();
    };
    const timer = setTimeout(done, 1000);
    timer.unref();
    // Written, not ended: as libpq's PQcancel does, the connection stays open until the server
    // closes it. PgBouncer drops a cancel whose client half-closed before it was forwarded.
    socket.once('connect', () => socket.write(message));
    socket.once('close', done);
    socket.once('error', done);
  });
}
