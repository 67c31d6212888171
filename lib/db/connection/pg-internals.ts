/**
 * The parts of node-postgres' Connection that the connection policy builds on, typed in one place
 * (pg 8.x, pg/lib/connection.js). pg's public API has no hook before it answers an
 * authentication request, so the policy subclasses its Connection; a unit test checks that these
 * members still exist, so a pg upgrade that changes them fails the tests instead of weakening
 * the policy.
 */
import type { EventEmitter } from 'node:events';
import type { Socket } from 'node:net';
import type { ConnectionOptions } from 'node:tls';
import pg from 'pg';

export interface PgConnectionConfig {
  readonly ssl: ConnectionOptions | false;
  readonly sslNegotiation: 'postgres' | 'direct';
  readonly keepAlive: boolean;
  readonly keepAliveInitialDelayMillis: number;
  readonly encoding: string;
}

export interface PgConnection extends EventEmitter {
  /** The socket; replaced by a TLSSocket once TLS is negotiated. */
  stream: Socket;
  /** Truthy while TLS is requested. */
  ssl: ConnectionOptions | boolean;
  /** Opens the socket; with `ssl` set, reads the server's one-byte answer to SSLRequest with `stream.once('data')`. */
  connect(port: number | string, host?: string): void;
  /** Feeds `stream`'s 'data' to pg-protocol's parser, which emits one event per backend message. */
  attachListeners(stream: EventEmitter): void;
  sendSASLInitialResponseMessage(mechanism: string, initialResponse: string): void;
}

export const PgConnectionClass = (pg as unknown as { Connection: new (config: PgConnectionConfig) => PgConnection }).Connection;
