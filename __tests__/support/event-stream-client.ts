/**
 * A Server-Sent Events reader for the change feed tests: opens `GET url` with the given headers
 * over node:http and parses the stream as the WHATWG spec does (`id:`, `event:`, `data:` lines,
 * a blank line ends an event, `:` lines are comments), so a test can wait for the next event that
 * matches. A response that is not a stream resolves with its status and JSON body instead.
 */
import http from 'node:http';

export interface SseEvent {
  readonly id: string | undefined;
  readonly event: string;
  readonly data: string;
}

export interface OpenStream {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  /** Every event so far, in order. */
  readonly events: SseEvent[];
  /** Comment lines (heartbeats) so far. */
  readonly comments: string[];
  readonly res: http.IncomingMessage;
  /** Resolves with the first event (from `from` on) that matches, or rejects after `timeoutMs`. */
  next(match: (e: SseEvent) => boolean, timeoutMs?: number, from?: number): Promise<SseEvent>;
  /** Resolves when the server ended the stream. */
  readonly ended: Promise<void>;
  close(): void;
}

export interface Refused {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  /** The error body (docs/errors.md): `code`, `message`, ... */
  readonly body: { code?: string; message?: string } & Record<string, unknown>;
}

export function openEventStream(url: string, headers: Record<string, string>): Promise<OpenStream | Refused> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { headers }, (res) => {
      if (res.statusCode !== 200 || !String(res.headers['content-type']).startsWith('text/event-stream')) {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text ? (JSON.parse(text) as Refused['body']) : {} }));
        return;
      }
      const events: SseEvent[] = [];
      const comments: string[] = [];
      const waiters = new Set<() => void>();
      let buffer = '';
      let current: { id?: string; event?: string; data: string[] } = { data: [] };
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        buffer += chunk;
        let nl: number;
        while ((nl = buffer.indexOf('\n')) >= 0) {
          const line = buffer.slice(0, nl);
          buffer = buffer.slice(nl + 1);
          if (line === '') {
            if (current.data.length > 0 || current.event !== undefined) {
              events.push({ id: current.id, event: current.event ?? 'message', data: current.data.join('\n') });
              for (const w of [...waiters]) w();
            }
            current = { data: [] };
          } else if (line.startsWith(':')) comments.push(line.slice(1).trim());
          else {
            const colon = line.indexOf(':');
            const field = line.slice(0, colon);
            const value = line.slice(colon + 1).replace(/^ /, '');
            if (field === 'id') current.id = value;
            else if (field === 'event') current.event = value;
            else if (field === 'data') current.data.push(value);
          }
        }
      });
      const ended = new Promise<void>((done) => {
        res.on('end', () => done());
        res.on('close', () => done());
      });
      resolve({
        status: 200,
        headers: res.headers,
        events,
        comments,
        res,
        ended,
        close: () => req.destroy(),
        next(match, timeoutMs = 10_000, from = 0) {
          return new Promise((ok, fail) => {
            const look = (): boolean => {
              const found = events.slice(from).find(match);
              if (found) {
                waiters.delete(check);
                clearTimeout(timer);
                ok(found);
                return true;
              }
              return false;
            };
            const check = (): void => void look();
            const timer = setTimeout(() => {
              waiters.delete(check);
              fail(new Error(`no matching event within ${timeoutMs} ms; got ${JSON.stringify(events.slice(from))}`));
            }, timeoutMs);
            if (!look()) waiters.add(check);
          });
        },
      });
    });
    req.on('error', reject);
  });
}

export function isStream(s: OpenStream | Refused): s is OpenStream {
  return 'events' in s;
}
