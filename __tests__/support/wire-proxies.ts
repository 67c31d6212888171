/**
 * Two TCP proxies in front of a PostgreSQL server, for tests that must see or tamper with the
 * wire: a recorder (plain relay that keeps what the client sent) and a TLS man in the middle
 * (answers the client's SSLRequest with its own certificate, opens its own TLS session to the
 * server, relays the plaintext between them). Loopback only.
 */
import net from 'node:net';
import tls from 'node:tls';

export interface Proxy {
  readonly port: number;
  /** Everything clients sent through the proxy so far. */
  sent(): Buffer;
  close(): Promise<void>;
}

const SSL_REQUEST = Buffer.from([0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f]);

export function startRecordingProxy(targetPort: number): Promise<Proxy> {
  return listen((client, record) => {
    const upstream = net.connect(targetPort, '127.0.0.1');
    client.on('data', (chunk: Buffer) => record(chunk));
    client.pipe(upstream).pipe(client);
    return [upstream];
  });
}

/** A relay that resets (TCP RST) the next `count` connections mid-way through their GSS handshake. */
export interface GssResetProxy extends Proxy {
  /** The next `count` connections are reset when the client sends its first GSSResponse ('p'). */
  resetNext(count: number): void;
  /** How many connections were reset so far. */
  resets(): number;
  /** How many connections the proxy accepted so far. */
  connections(): number;
}

export async function startGssResetProxy(targetPort: number): Promise<GssResetProxy> {
  let armed = 0;
  let resets = 0;
  let connections = 0;
  const proxy = await listen((client, record) => {
    connections++;
    const upstream = net.connect(targetPort, '127.0.0.1');
    const reset = armed > 0;
    if (reset) armed--;
    let startup = true;
    client.on('data', (chunk: Buffer) => {
      record(chunk);
      // The startup message has no type byte; a later message starting with 'p' is the GSS token.
      if (reset && !startup && chunk[0] === 0x70) {
        resets++;
        upstream.destroy();
        client.resetAndDestroy();
        return;
      }
      startup = false;
      upstream.write(chunk);
    });
    upstream.pipe(client);
    return [upstream];
  });
  return { ...proxy, resetNext: (count) => void (armed = count), resets: () => resets, connections: () => connections };
}

/** With a certificate the client may or may not trust, and a TLS session of its own to the server. */
export function startTlsMitmProxy(targetPort: number, certificate: { cert: string; key: string }): Promise<Proxy> {
  return listen((client, record) => {
    const sockets: net.Socket[] = [];
    client.once('data', (first: Buffer) => {
      if (!first.subarray(0, 8).equals(SSL_REQUEST)) {
        client.destroy();
        return;
      }
      client.write('S');
      const clientTls = new tls.TLSSocket(client, { isServer: true, cert: certificate.cert, key: certificate.key });
      const upstream = net.connect(targetPort, '127.0.0.1', () => upstream.write(SSL_REQUEST));
      sockets.push(upstream, clientTls);
      upstream.once('data', (answer: Buffer) => {
        if (answer[0] !== 0x53 /* S */) return void client.destroy();
        const serverTls = tls.connect({ socket: upstream, rejectUnauthorized: false });
        sockets.push(serverTls);
        clientTls.on('data', (chunk: Buffer) => record(chunk));
        clientTls.pipe(serverTls).pipe(clientTls);
        const end = (): void => {
          clientTls.destroy();
          serverTls.destroy();
        };
        clientTls.on('error', end).on('close', end);
        serverTls.on('error', end).on('close', end);
      });
      upstream.on('error', () => client.destroy());
    });
    return sockets;
  });
}

function listen(onClient: (client: net.Socket, record: (chunk: Buffer) => void) => net.Socket[]): Promise<Proxy> {
  const chunks: Buffer[] = [];
  const open = new Set<net.Socket>();
  const server = net.createServer((client) => {
    open.add(client);
    client.on('error', () => undefined);
    const others = onClient(client, (chunk) => chunks.push(Buffer.from(chunk)));
    const closeAll = (): void => {
      for (const s of others) s.destroy();
      client.destroy();
    };
    client.on('close', closeAll);
    for (const s of others) {
      open.add(s);
      s.on('error', () => client.destroy());
    }
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      resolve({
        port: (server.address() as net.AddressInfo).port,
        sent: () => Buffer.concat(chunks),
        close: () =>
          new Promise<void>((done) => {
            for (const s of open) s.destroy();
            server.close(() => done());
          }),
      });
    });
  });
}
