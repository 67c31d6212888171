/**
 * catchStreamErrors (lib/db/catch-stream-errors.ts): an exception thrown by a 'data' listener of a
 * real socket destroys that socket with a StreamListenerError carrying it, instead of escaping
 * from the socket's read callback as an uncaught exception (which would end the process: jest
 * fails the test on it). Other events pass through unchanged.
 */
import net from 'node:net';
import { catchStreamErrors, StreamListenerError } from '../../../lib/db/catch-stream-errors';

async function socketPair(): Promise<{ client: net.Socket; peer: net.Socket; close(): void }> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const accepted = new Promise<net.Socket>((resolve) => server.once('connection', resolve));
  const client = net.connect((server.address() as net.AddressInfo).port, '127.0.0.1');
  await new Promise((resolve) => client.once('connect', resolve));
  const peer = await accepted;
  return { client, peer, close: () => (client.destroy(), peer.destroy(), server.close()) };
}

describe('catchStreamErrors', () => {
  it('turns an exception in a data listener into the socket error, and destroys the socket', async () => {
    const { client, peer, close } = await socketPair();
    try {
      catchStreamErrors(client);
      const tooLong = Object.assign(new Error('Cannot create a string longer than 0x1fffffe8 characters'), { code: 'ERR_STRING_TOO_LONG' });
      client.on('data', () => {
        throw tooLong;
      });
      const failed = new Promise<Error>((resolve) => client.once('error', resolve));
      const closed = new Promise((resolve) => client.once('close', resolve));
      peer.write('x');
      const err = await failed;
      expect(err).toBeInstanceOf(StreamListenerError);
      expect((err as StreamListenerError).cause).toBe(tooLong);
      expect((err as StreamListenerError).stringTooLong).toBe(true);
      await closed;
      expect(client.destroyed).toBe(true);
    } finally {
      close();
    }
  });

  it('passes data and other events through, and wraps a socket once', async () => {
    const { client, peer, close } = await socketPair();
    try {
      catchStreamErrors(client);
      const emit = client.emit;
      catchStreamErrors(client);
      expect(client.emit).toBe(emit);
      const got = new Promise<string>((resolve) => client.once('data', (chunk: Buffer) => resolve(chunk.toString())));
      peer.write('hello');
      expect(await got).toBe('hello');
      const ended = new Promise((resolve) => client.once('end', resolve));
      peer.end();
      await ended;
      expect(new StreamListenerError(new Error('other')).stringTooLong).toBe(false);
    } finally {
      close();
    }
  });
});
