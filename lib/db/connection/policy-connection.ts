/**
 * node-postgres' Connection with the connection policy in the middle: the server's start-up
 * messages go through an AuthGate before pg's parser sees them, and with sslmode=prefer a server
 * that answers 'N' to SSLRequest gets the startup message in plain text on the same socket, as
 * libpq does (plain pg would fail the connection). In: pg's Connection config and the gate's
 * policy. Never: falls back to plain text for any other reason than the server's 'N' (a failed
 * TLS handshake or certificate check fails the connection).
 */
import { EventEmitter } from 'node:events';
import { TLSSocket } from 'node:tls';
import { AuthGate, type GatePolicy } from './auth-gate';
import { PgConnectionClass, type PgConnectionConfig } from './pg-internals';

export class PolicyConnection extends PgConnectionClass {
  readonly gate: AuthGate;
  private relay: EventEmitter | undefined;

  constructor(
    config: PgConnectionConfig,
    policy: GatePolicy,
    private readonly plainIfNoTls: boolean,
  ) {
    super(config);
    this.gate = new AuthGate(policy, {
      forward: (bytes) => this.relay?.emit('data', bytes),
      // As pg's own _send: a socket the server already closed is not written to.
      send: (bytes) => void (this.stream.writable && this.stream.write(bytes)),
      fail: (error) => this.abort(error),
      tlsInUse: () => this.stream instanceof TLSSocket,
    });
  }

  override connect(port: number | string, host?: string): void {
    super.connect(port, host);
    if (this.plainIfNoTls && this.ssl) this.acceptPlainAnswer();
  }

  override attachListeners(stream: EventEmitter): void {
    // pg's parser reads from the relay; the relay gets only what the gate passes on.
    const relay = new EventEmitter();
    this.relay = relay;
    super.attachListeners(relay);
    stream.on('data', (chunk: Buffer) => this.gate.push(chunk));
    stream.on('end', () => relay.emit('end'));
  }

  override sendSASLInitialResponseMessage(mechanism: string, initialResponse: string): void {
    const refusal = this.gate.checkSaslMechanism(mechanism);
    if (refusal !== undefined) return this.abort(refusal);
    super.sendSASLInitialResponseMessage(mechanism, initialResponse);
  }

  /**
   * pg's connect() has just registered its one-time reader of the SSLRequest answer; put ours in
   * front of it. 'N' (no TLS here): carry on in plain text; anything else goes to pg's reader.
   */
  private acceptPlainAnswer(): void {
    const stream = this.stream;
    const readers = stream.listeners('data');
    if (readers.length !== 1) {
      // Not the pg this was written for: fail rather than guess (docs/security.md).
      process.nextTick(() => this.abort(new Error('sslmode=prefer: unexpected node-postgres internals (SSLRequest reader not found)')));
      return;
    }
    const pgReader = readers[0] as (buffer: Buffer) => void;
    stream.removeListener('data', pgReader);
    stream.once('data', (buffer: Buffer) => {
      if (buffer.length === 1 && buffer[0] === 0x4e /* 'N' */) {
        this.ssl = false;
        this.attachListeners(stream);
        // pg's Client sends its startup message on 'sslconnect'; the socket simply stays plain.
        this.emit('sslconnect');
        return;
      }
      pgReader.call(stream, buffer);
    });
  }

  private abort(error: Error): void {
    this.emit('error', error);
    this.stream.destroy();
  }
}
