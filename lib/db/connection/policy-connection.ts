/**
 * node-postgres' Connection with the connection policy in the middle: the server's start-up
 * messages go through an AuthGate before pg's parser sees them, and with sslmode=prefer a server
 * that answers 'N' to SSLRequest gets the startup message in plain text on the same socket, as
 * libpq does (plain pg would fail the connection). In: pg's Connection config and the gate's
 * policy. Never: falls back to plain text for any other reason than the server's 'N' (a failed
 * TLS handshake or certificate check fails the connection).
 * A socket that is reset or closed in the middle of a GSS handshake (after the server asked for
 * GSSAPI, before AuthenticationOk) is opened again, up to gss_connect_retries times with the
 * gss_retry_base_ms backoff (retry-delay.ts), unseen by pg's Client: every connection gets the
 * retries, the pool's first ones and those that replace a terminated one alike.
 */
import { EventEmitter } from 'node:events';
import { Socket } from 'node:net';
import { TLSSocket } from 'node:tls';
import { AuthGate, type GatePolicy } from './auth-gate';
import { PgConnectionClass, type PgConnectionConfig } from './pg-internals';
import { retryDelayMs } from './retry-delay';

/** Reconnecting after a GSS handshake cut off by the network (docs/security.md, "Kerberos / GSSAPI"). */
export interface HandshakeRetry {
  readonly retries: number;
  readonly baseMs: number;
  /** Called before each retry (the /metrics counter). */
  readonly onRetry: () => void;
}

export class PolicyConnection extends PgConnectionClass {
  gate: AuthGate;
  private relay: EventEmitter | undefined;
  private readonly initialSsl: PgConnectionConfig['ssl'];
  private target: [port: number | string, host?: string] | undefined;
  private reconnects = 0;
  private reconnecting = false;
  private aborted = false;

  constructor(
    config: PgConnectionConfig,
    private readonly policy: GatePolicy,
    private readonly plainIfNoTls: boolean,
    private readonly handshakeRetry?: HandshakeRetry,
  ) {
    super(config);
    this.initialSsl = config.ssl;
    this.gate = this.newGate();
  }

  private newGate(): AuthGate {
    return new AuthGate(this.policy, {
      forward: (bytes) => this.relay?.emit('data', bytes),
      // As pg's own _send: a socket the server already closed is not written to.
      send: (bytes) => void (this.stream.writable && this.stream.write(bytes)),
      fail: (error) => this.abort(error),
      tlsInUse: () => this.stream instanceof TLSSocket,
    });
  }

  override connect(port: number | string, host?: string): void {
    this.target = [port, host];
    super.connect(port, host);
    if (this.plainIfNoTls && this.ssl) this.acceptPlainAnswer();
  }

  /**
   * pg's Connection reports its socket's 'error' and 'close' (as 'end') through emit: one that
   * cuts a GSS handshake short starts the next attempt instead, while attempts are left.
   */
  override emit(event: string | symbol, ...args: unknown[]): boolean {
    if ((event === 'error' || event === 'end') && this.mayReconnect()) {
      this.reconnect();
      return true;
    }
    return super.emit(event, ...args);
  }

  private mayReconnect(): boolean {
    const retry = this.handshakeRetry;
    if (retry === undefined || this.target === undefined || this.aborted || this.reconnecting) return false;
    const self = this as unknown as { _ending?: boolean };
    return this.gate.gssStarted && !this.gate.authenticated && !this.gate.serverError && !self._ending && this.reconnects < retry.retries;
  }

  private reconnect(): void {
    const retry = this.handshakeRetry!;
    const [port, host] = this.target!;
    const old = this.stream;
    // Nothing more from the old socket reaches pg (its 'close' would end the new attempt).
    old.removeAllListeners();
    old.on('error', () => undefined);
    old.destroy();
    this.reconnecting = true;
    retry.onRetry();
    const delay = retryDelayMs(retry.baseMs, this.reconnects++);
    setTimeout(() => {
      this.reconnecting = false;
      // The Client gave up meanwhile (its connection timeout): it hears the end it waits for.
      if ((this as unknown as { _ending?: boolean })._ending) return void super.emit('end');
      this.stream = new Socket();
      this.ssl = this.initialSsl;
      this.gate = this.newGate();
      this.relay = undefined;
      this.connect(port, host);
    }, delay);
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
    // The policy refused (or GSS failed for good): no new attempt.
    this.aborted = true;
    this.emit('error', error);
    this.stream.destroy();
  }
}
