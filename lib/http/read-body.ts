/**
 * readBody: the request body of a write as UTF-8 text, read from the stream with a byte limit
 * (readBodyBytes: as bytes, for an `application/octet-stream` body).
 * In: Express/Node `req` and `max_request_body_bytes`. Out: the exact text (never JSON.parse'd
 * here: numbers must reach PostgreSQL as written), or undefined when there is no body.
 * Never: buffers more than the limit. A declared Content-Length over the limit is refused before
 * one byte is stored; a chunked body is counted while it streams and storing stops at the first
 * chunk past the limit. The rest is read and dropped (a "lingering close", as nginx does): closing
 * the socket while the client is still sending makes the kernel answer with RST, which destroys
 * the 413 before the client reads it. Draining is bounded by DRAIN_MS, then the socket is destroyed.
 *
 * The gateway is mounted without a body parser. When the host app ran one anyway (`express.json()`
 * before the router), the stream is already consumed: a string or Buffer `req.body` is used as is;
 * a parsed object is re-serialised, which cannot restore integers above 2^53 that the host's
 * parser already rounded (docs/writing.md says to mount the gateway before any JSON parser).
 */
import type { IncomingMessage } from 'node:http';
import { GatewayError } from '../errors/gateway-error';

const decoder = new TextDecoder('utf-8', { fatal: true });
/** How long a refused body may keep streaming (into nothing) before the connection is cut. */
const DRAIN_MS = 10000;

export async function readBody(req: IncomingMessage & { body?: unknown; _body?: unknown }, maxBytes: number, limitKey = 'max_request_body_bytes'): Promise<string | undefined> {
  if (alreadyParsed(req)) return fromParsedBody(req.body, maxBytes, limitKey);
  const bytes = await readStream(req, maxBytes, limitKey);
  if (bytes === undefined) return undefined;
  try {
    return decoder.decode(bytes);
  } catch {
    throw new GatewayError('PARSE_ERROR', 'The request body is not valid UTF-8.');
  }
}

/**
 * The body as bytes, for an `application/octet-stream` request (a PostgREST call passing it to a
 * function's one bytea argument), with the same limit; a host's parsed Buffer or string is used as is.
 */
export async function readBodyBytes(req: IncomingMessage & { body?: unknown; _body?: unknown }, maxBytes: number, limitKey = 'max_request_body_bytes'): Promise<Uint8Array | undefined> {
  if (alreadyParsed(req)) {
    const body = req.body;
    const bytes = Buffer.isBuffer(body) ? body : typeof body === 'string' ? Buffer.from(body, 'utf8') : undefined;
    if (bytes === undefined || bytes.length === 0) return undefined;
    if (bytes.length > maxBytes) throw tooLarge(maxBytes, limitKey);
    return bytes;
  }
  return readStream(req, maxBytes, limitKey);
}

async function readStream(req: IncomingMessage, maxBytes: number, limitKey: string): Promise<Buffer | undefined> {
  const declared = req.headers['content-length'];
  if (declared !== undefined && /^\d+$/.test(declared) && Number(declared) > maxBytes) {
    discardRest(req);
    throw tooLarge(maxBytes, limitKey);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  await new Promise<void>((resolve, reject) => {
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > maxBytes) {
        cleanup();
        discardRest(req);
        reject(tooLarge(maxBytes, limitKey));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void => {
      cleanup();
      resolve();
    };
    const onError = (err: Error): void => {
      cleanup();
      reject(new GatewayError('PARSE_ERROR', 'The request body could not be read.', { cause: err }));
    };
    const cleanup = (): void => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
  });
  if (size === 0) return undefined;
  return chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size);
}

/** `Content-Type: application/octet-stream` (parameters aside). */
export function isOctetStream(header: string | undefined): boolean {
  return (header ?? '').split(';')[0]!.trim().toLowerCase() === 'application/octet-stream';
}

/** body-parser sets `_body`; a stream that has ended was read by someone else. */
function alreadyParsed(req: IncomingMessage & { body?: unknown; _body?: unknown }): boolean {
  return req._body === true || (req.readableEnded && req.body !== undefined);
}

function fromParsedBody(body: unknown, maxBytes: number, limitKey: string): string | undefined {
  let text: string | undefined;
  if (typeof body === 'string') text = body;
  else if (Buffer.isBuffer(body)) text = body.toString('utf8');
  else if (body !== undefined) text = JSON.stringify(body);
  if (text === undefined || text === '') return undefined;
  if (Buffer.byteLength(text) > maxBytes) throw tooLarge(maxBytes, limitKey);
  return text;
}

/** Reads the rest of a refused body into nothing, so the client can finish sending and read the 413. */
function discardRest(req: IncomingMessage): void {
  if (req.readableEnded) return;
  const timer = setTimeout(() => req.destroy(), DRAIN_MS);
  timer.unref();
  const stop = (): void => clearTimeout(timer);
  req.once('end', stop);
  req.once('close', stop);
  req.resume();
}

/** `limitKey`: the configuration key that set the bound (`max_batch_body_bytes` for a batch). */
function tooLarge(maxBytes: number, limitKey: string): GatewayError {
  return new GatewayError('PAYLOAD_TOO_LARGE', `The request body is larger than ${maxBytes} bytes (${limitKey}).`, {
    details: { [limitKey]: maxBytes },
  });
}
