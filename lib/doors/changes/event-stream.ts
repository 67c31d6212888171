/**
 * One subscriber's Server-Sent Events stream (WHATWG HTML, §9.2 "Server-sent events"), with a
 * bounded queue: what the socket does not take at once waits here, and past
 * `max_buffered_events` waiting events the stream is sent a final `overflow` event and closed
 * (docs/change-feed.md, "Slow consumers"). A comment line every `heartbeat_s` keeps proxies from
 * closing an idle stream. In: the response, once nothing else wrote to it. Never: buffers
 * without bound, or writes after the end.
 */
import type { ServerResponse } from 'node:http';

export class EventStream {
  private readonly queue: string[] = [];
  private blocked = false;
  private heartbeat: NodeJS.Timeout | undefined;
  closed = false;
  /** Why the stream ended, once it did: a final event's name, or `client_closed`. */
  endReason: string | undefined;

  constructor(
    private readonly res: ServerResponse,
    private readonly limits: { readonly maxBufferedEvents: number; readonly heartbeatMs: number },
    private readonly onClose: (reason: string) => void,
  ) {
    res.on('close', () => this.finished(this.endReason ?? 'client_closed'));
    res.on('drain', () => this.flush());
  }

  /** Status, headers and a first comment, so that a client knows the stream is open. */
  open(): void {
    this.res.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-cache, no-transform',
      Connection: 'keep-alive',
      // nginx buffers responses unless told not to.
      'X-Accel-Buffering': 'no',
    });
    this.res.write(': tablegate change feed\n\n');
    this.heartbeat = setInterval(() => {
      if (!this.blocked && !this.closed) this.res.write(': heartbeat\n\n');
    }, this.limits.heartbeatMs);
    this.heartbeat.unref();
  }

  /** Queues an event frame (event-stream.ts's `frame`); false once the stream is closed. */
  send(frameText: string): boolean {
    if (this.closed) return false;
    if (this.blocked) {
      this.queue.push(frameText);
      if (this.queue.length > this.limits.maxBufferedEvents) {
        this.end('overflow', { reason: 'The client read too slowly: more than max_buffered_events events were waiting.', resume: 'Reconnect with Last-Event-ID.' });
        return false;
      }
      return true;
    }
    if (!this.res.write(frameText)) this.blocked = true;
    return true;
  }

  /** Writes a final event (after what is queued in the socket, not in this queue) and ends the stream. */
  end(event: string, data: Readonly<Record<string, unknown>>): void {
    if (this.closed) return;
    this.endReason = event;
    this.queue.length = 0;
    this.res.end(frame(undefined, event, JSON.stringify(data)));
    this.finished(event);
  }

  private flush(): void {
    this.blocked = false;
    while (this.queue.length > 0 && !this.closed) {
      if (!this.res.write(this.queue.shift()!)) {
        this.blocked = true;
        return;
      }
    }
  }

  private finished(reason: string): void {
    if (this.closed) return;
    this.closed = true;
    this.endReason = reason;
    clearInterval(this.heartbeat);
    this.onClose(reason);
  }
}

/**
 * One event's text: `id:` (when given), `event:` and `data:`. A line break inside the data
 * (a json column keeps the text it was given) becomes a second `data:` line, which a client
 * joins back with a line feed.
 */
export function frame(id: string | undefined, event: string, data: string): string {
  const lines = data.includes('\n') || data.includes('\r') ? data.split(/\r\n|\r|\n/).map((l) => `data: ${l}\n`).join('') : `data: ${data}\n`;
  return `${id === undefined ? '' : `id: ${id}\n`}event: ${event}\n${lines}\n`;
}
