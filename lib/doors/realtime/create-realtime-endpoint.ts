/**
 * The realtime door (docs/postgrest-dialect.md, "Realtime"): @supabase/realtime-js's WebSocket
 * endpoint, `{path}/websocket?apikey=...&vsn=2.0.0`, over the change feed. An Express router
 * cannot take a WebSocket upgrade, so the host attaches it to its HTTP server
 * (`gateway.attachRealtime(server)`); `ws` does the WebSocket protocol.
 * In: the change feed and the auth stage. Out: attach and close. Never: serves a socket while
 * the gateway drains, or answers an upgrade of another path (it is left to other listeners).
 */
import type http from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer } from 'ws';
import createDebug from 'debug';
import type { ChangeSubscriber } from '../../pipeline/change-subscription';
import type { Identity } from '../../pipeline/identity';
import type { GatewayRequest } from '../../pipeline/gateway-request';
import { RealtimeConnection } from './realtime-connection';
import { readVsn } from './phoenix-message';

const log = createDebug('tablegate:realtime');

export interface RealtimeParts {
  readonly feed: ChangeSubscriber;
  /** The auth stage on `request` (its Authorization header set by the door). */
  auth(request: GatewayRequest): Promise<Identity>;
  publicError(err: unknown, identity: Identity | undefined): Promise<unknown>;
  /** True once the gateway drains: new sockets are refused. */
  draining(): boolean;
  /** Largest message a client may send, bytes (joins and tokens are small). */
  readonly maxPayload: number;
  readonly maxBufferedBytes: number;
}

export interface RealtimeAttachOptions {
  /** Where realtime-js looks: the project URL's `/realtime/v1` (default). */
  readonly path?: string;
}

/** One attachment to an HTTP server. */
export interface RealtimeAttachment {
  /** Stops taking upgrades on the server and closes its sockets (code 1001: clients reconnect). */
  close(): void;
}

export interface RealtimeEndpoint {
  attach(server: http.Server, options?: RealtimeAttachOptions): RealtimeAttachment;
  /** Closes every attachment's sockets. */
  close(): void;
}

export function createRealtimeEndpoint(parts: RealtimeParts): RealtimeEndpoint {
  const attachments = new Set<RealtimeAttachment>();
  return {
    attach(server, options = {}) {
      const base = (options.path ?? '/realtime/v1').replace(/\/+$/, '');
      const wss = new WebSocketServer({ noServer: true, maxPayload: parts.maxPayload });
      const connections = new Set<RealtimeConnection>();
      const onUpgrade = (req: http.IncomingMessage, socket: Duplex, head: Buffer): void => {
        const url = new URL(req.url ?? '/', 'http://localhost');
        if (url.pathname !== `${base}/websocket` && url.pathname !== `${base}/websocket/`) {
          // Another listener's path; with none, the socket would wait for nothing.
          if (server.listenerCount('upgrade') === 1) refuse(socket, 404, 'Not Found');
          return;
        }
        if (parts.draining()) return refuse(socket, 503, 'Service Unavailable');
        const vsn = readVsn(url.searchParams.get('vsn'));
        if (vsn === undefined) return refuse(socket, 400, 'Bad Request');
        const apikey = url.searchParams.get('apikey') ?? undefined;
        wss.handleUpgrade(req, socket, head, (ws) => {
          const connection = new RealtimeConnection(ws, vsn, apikey === '' ? undefined : apikey, req.socket.remoteAddress ?? '', {
            feed: parts.feed,
            authenticate: (token, request) => parts.auth(token === undefined ? request : { ...request, headers: { ...request.headers, authorization: `Bearer ${token}` } }),
            publicError: (err, identity) => parts.publicError(err, identity),
            log: (m) => log(m),
            maxBufferedBytes: parts.maxBufferedBytes,
          });
          connections.add(connection);
          ws.on('close', () => connections.delete(connection));
        });
      };
      server.on('upgrade', onUpgrade);
      const attachment: RealtimeAttachment = {
        close() {
          server.off('upgrade', onUpgrade);
          for (const c of [...connections]) c.drop(1001, 'the gateway is shutting down');
          wss.close();
          attachments.delete(attachment);
        },
      };
      attachments.add(attachment);
      return attachment;
    },
    close() {
      for (const a of [...attachments]) a.close();
    },
  };
}

function refuse(socket: Duplex, status: number, text: string): void {
  socket.end(`HTTP/1.1 ${status} ${text}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
}
