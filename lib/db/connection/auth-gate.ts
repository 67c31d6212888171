/**
 * The check between the server and node-postgres during start-up. In: the server's bytes until
 * AuthenticationOk. Out: each message passed on to node-postgres' parser, unless the policy
 * refuses it (then the connection fails with a ConnectionPolicyError naming the mechanism and the
 * key) or it is a GSS message, which the gate answers itself (node-postgres cannot: its parser
 * throws on authentication codes 7-9). After AuthenticationOk every byte passes through untouched.
 * Never: lets node-postgres answer a request the policy forbids, or accepts AuthenticationOk when
 * channel_binding=require and channel binding was not used (libpq's check_expected_areq).
 *
 * Message layout: PostgreSQL manual, "Message Formats" (Authentication* are 'R' + length + code).
 */
import type { AuthPolicy, ChannelBinding } from './connection-settings';
import { describeMechanism, refusalFor } from './auth-policy';
import { ConnectionPolicyError } from './connection-policy-error';

export interface GateIo {
  /** Bytes for node-postgres' parser. */
  forward(bytes: Buffer): void;
  /** Bytes for the server. */
  send(bytes: Buffer): void;
  /** Ends the connection with this error. */
  fail(error: Error): void;
  tlsInUse(): boolean;
}

/** A GSS conversation for one connection (gss/gss-exchange.ts). */
export interface GssConversation {
  first(): Promise<Buffer | undefined>;
  next(challenge: Buffer): Promise<Buffer | undefined>;
  /** False when the provider knows mutual authentication is not complete. */
  readonly complete: boolean | undefined;
}

export interface GatePolicy {
  readonly auth: AuthPolicy;
  readonly channelBinding: ChannelBinding;
  /** Starts a GSS conversation, or returns why it cannot (no provider configured). */
  startGss(mechanism: 'gssapi' | 'sspi'): GssConversation | string;
}

const AUTH_OK = 0;
const AUTH_KERBEROS_V5 = 2;
const AUTH_CLEARTEXT = 3;
const AUTH_MD5 = 5;
const AUTH_SCM_CREDENTIAL = 6;
const AUTH_GSS = 7;
const AUTH_GSS_CONTINUE = 8;
const AUTH_SSPI = 9;
const AUTH_SASL = 10;
const AUTH_SASL_CONTINUE = 11;
const AUTH_SASL_FINAL = 12;

/** Start-up messages are small; a GSS token with a large PAC stays far below this. */
const MAX_STARTUP_MESSAGE = 1 << 20;
const EMPTY = Buffer.alloc(0);

export class AuthGate {
  /** The server asked for GSSAPI/SSPI on this connection (its outcome feeds the GSS circuit). */
  gssStarted = false;
  /** The server sent an ErrorResponse during start-up (it refused the connection: nothing to retry). */
  serverError = false;
  /** AuthenticationOk passed the policy: everything after it goes through untouched. */
  get authenticated(): boolean {
    return this.passthrough;
  }
  private buffer: Buffer = EMPTY;
  private passthrough = false;
  private waiting = false;
  private failed = false;
  private exchanged = false;
  private saslMechanism: string | undefined;
  private saslFinal = false;
  private gss: GssConversation | undefined;

  constructor(
    private readonly policy: GatePolicy,
    private readonly io: GateIo,
  ) {}

  push(chunk: Buffer): void {
    if (this.passthrough) return this.io.forward(chunk);
    if (this.failed) return;
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    this.drain();
  }

  /** node-postgres is about to send SASLInitialResponse with this mechanism: a refusal, or undefined. */
  checkSaslMechanism(mechanism: string): ConnectionPolicyError | undefined {
    this.saslMechanism = mechanism;
    if (this.policy.channelBinding === 'require' && mechanism !== 'SCRAM-SHA-256-PLUS') {
      return new ConnectionPolicyError(`channel_binding=require, but node-postgres chose ${mechanism} instead of SCRAM-SHA-256-PLUS`, 'channel_binding');
    }
    return undefined;
  }

  private drain(): void {
    while (!this.waiting && !this.failed && !this.passthrough && this.buffer.length >= 5) {
      const length = this.buffer.readUInt32BE(1);
      if (length < 4 || length > MAX_STARTUP_MESSAGE) return this.abort(new ConnectionPolicyError(`malformed message from the server during start-up (length ${length})`));
      if (this.buffer.length < 1 + length) return;
      const frame = this.buffer.subarray(0, 1 + length);
      this.buffer = this.buffer.subarray(1 + length);
      const pending = this.handle(frame);
      if (pending !== undefined) {
        this.waiting = true;
        pending.then(
          () => {
            this.waiting = false;
            this.drain();
          },
          (err: unknown) => this.abort(err instanceof Error ? err : new Error(String(err))),
        );
      }
    }
    if (this.passthrough && this.buffer.length > 0) {
      const rest = this.buffer;
      this.buffer = EMPTY;
      this.io.forward(rest);
    }
  }

  /** Undefined when done; a promise while a GSS token is being made (later messages wait). */
  private handle(frame: Buffer): Promise<void> | undefined {
    if (frame[0] !== 0x52 /* 'R' */ || frame.length < 9) {
      if (frame[0] === 0x45 /* 'E' */) this.serverError = true;
      this.io.forward(frame);
      return undefined;
    }
    const code = frame.readInt32BE(5);
    switch (code) {
      case AUTH_OK:
        return this.onOk(frame);
      case AUTH_CLEARTEXT:
      case AUTH_MD5:
        return this.answerByPg(frame, code === AUTH_MD5 ? 'md5' : 'cleartext');
      case AUTH_SASL:
        return this.onSasl(frame);
      case AUTH_SASL_CONTINUE:
        this.io.forward(frame);
        return undefined;
      case AUTH_SASL_FINAL:
        this.saslFinal = true;
        this.io.forward(frame);
        return undefined;
      case AUTH_GSS:
      case AUTH_SSPI:
        return this.onGss(code === AUTH_SSPI ? 'sspi' : 'gssapi');
      case AUTH_GSS_CONTINUE:
        return this.onGssContinue(frame.subarray(9));
      case AUTH_KERBEROS_V5:
        return this.refuse(
          refusalFor(this.policy.auth, 'kerberos') ?? this.bindingRefusal('kerberos') ??
            'the server asked for Kerberos V5 authentication (AuthenticationKerberosV5), which PostgreSQL removed in 9.4 and no current client speaks; use pg_hba.conf method gss',
          'auth_kerberos',
        );
      case AUTH_SCM_CREDENTIAL:
        return this.refuse('the server asked for SCM credential authentication (AuthenticationSCMCredential), which is not supported', undefined);
      default:
        return this.refuse(`the server asked for an unknown authentication type (code ${code})`, undefined);
    }
  }

  private onOk(frame: Buffer): undefined {
    if (this.policy.channelBinding === 'require' && !(this.saslMechanism === 'SCRAM-SHA-256-PLUS' && this.saslFinal)) {
      return this.refuse(
        `channel_binding=require, but the server authenticated the gateway without channel binding${this.exchanged ? '' : ' (no authentication exchange at all: pg_hba.conf trust or cert)'}`,
        'channel_binding',
      );
    }
    if (this.policy.auth.requireExchange && !this.exchanged) {
      return this.refuse(
        `the server let the gateway in without any authentication exchange (pg_hba.conf trust, or cert alone), which auth_mode=${this.policy.auth.mode} does not accept`,
        'auth_mode',
      );
    }
    // A server that skips SASLFinal never proved it knows the password (node-postgres would not notice).
    if (this.saslMechanism !== undefined && !this.saslFinal) return this.refuse('the server ended SCRAM authentication without its final message (server signature)', 'auth_scram');
    if (this.gss !== undefined && this.gss.complete === false) return this.refuse('the server accepted GSSAPI authentication before mutual authentication completed', 'gss_provider');
    this.passthrough = true;
    this.io.forward(frame);
    return undefined;
  }

  private answerByPg(frame: Buffer, mechanism: 'md5' | 'cleartext'): undefined {
    const policyRefusal = refusalFor(this.policy.auth, mechanism);
    if (policyRefusal !== undefined) return this.refuse(policyRefusal, `auth_${mechanism}`);
    const bindingRefusal = this.bindingRefusal(mechanism);
    if (bindingRefusal !== undefined) return this.refuse(bindingRefusal, 'channel_binding');
    this.exchanged = true;
    this.io.forward(frame);
    return undefined;
  }

  private onSasl(frame: Buffer): undefined {
    const policyRefusal = refusalFor(this.policy.auth, 'scram');
    if (policyRefusal !== undefined) return this.refuse(policyRefusal, 'auth_scram');
    const mechanisms = frame.subarray(9).toString('utf8').split('\0').filter((m) => m !== '');
    if (this.policy.channelBinding === 'require') {
      if (!this.io.tlsInUse()) return this.refuse('channel_binding=require, but the connection is not encrypted (the server does not offer TLS)', 'channel_binding');
      if (!mechanisms.includes('SCRAM-SHA-256-PLUS')) return this.refuse(`channel_binding=require, but the server offers only ${mechanisms.join(', ') || 'no mechanism'}, not SCRAM-SHA-256-PLUS`, 'channel_binding');
    }
    this.exchanged = true;
    this.io.forward(frame);
    return undefined;
  }

  private onGss(mechanism: 'gssapi' | 'sspi'): Promise<void> | undefined {
    const policyRefusal = refusalFor(this.policy.auth, mechanism);
    if (policyRefusal !== undefined) return this.refuse(policyRefusal, `auth_${mechanism}`);
    const bindingRefusal = this.bindingRefusal(mechanism);
    if (bindingRefusal !== undefined) return this.refuse(bindingRefusal, 'channel_binding');
    if (this.gss !== undefined) return this.refuse('the server asked for GSSAPI authentication twice', undefined);
    const started = this.policy.startGss(mechanism);
    if (typeof started === 'string') return this.refuse(started, 'gss_provider');
    this.gss = started;
    this.gssStarted = true;
    this.exchanged = true;
    return started.first().then((token) => this.sendGssResponse(token));
  }

  private onGssContinue(challenge: Buffer): Promise<void> | undefined {
    if (this.gss === undefined) return this.refuse('the server sent GSSAPI data without asking for GSSAPI authentication first', undefined);
    return this.gss.next(Buffer.from(challenge)).then((token) => this.sendGssResponse(token));
  }

  /** GSSResponse: 'p', length, the token (PostgreSQL manual, "Message Formats"). */
  private sendGssResponse(token: Buffer | undefined): void {
    if (this.failed || token === undefined || token.length === 0) return;
    const message = Buffer.alloc(5 + token.length);
    message[0] = 0x70; // 'p'
    message.writeUInt32BE(4 + token.length, 1);
    token.copy(message, 5);
    this.io.send(message);
  }

  private bindingRefusal(mechanism: 'md5' | 'cleartext' | 'kerberos' | 'gssapi' | 'sspi'): string | undefined {
    if (this.policy.channelBinding !== 'require') return undefined;
    return `channel_binding=require, but the server asked for ${describeMechanism(mechanism)}, which has no channel binding (only SCRAM-SHA-256-PLUS over TLS has)`;
  }

  private refuse(message: string, key: string | undefined): undefined {
    this.abort(new ConnectionPolicyError(message, key));
    return undefined;
  }

  private abort(error: Error): void {
    if (this.failed) return;
    this.failed = true;
    this.buffer = EMPTY;
    this.io.fail(error);
  }
}
