/**
 * One GSS conversation on one connection, with gss_connect_retries. Only the first token is
 * retried: making it is the step that reaches the KDC (for a service ticket), where failures are
 * transient, and nothing has been sent to the server yet. A failure later in the conversation
 * cannot be retried on the same connection. In: a provider and the retry settings. Out: tokens
 * for AuthGate. Never: retries without the delay of retry-delay.ts.
 */
import { ConnectionPolicyError } from '../connection-policy-error';
import { retryDelayMs } from '../retry-delay';
import type { GssConversation } from '../auth-gate';
import type { GssContext, GssToken } from './gss-options';
import type { GssProvider } from './gss-provider';

export interface GssRetry {
  readonly retries: number;
  readonly baseMs: number;
  /** Called before each retry (the /metrics counter). */
  readonly onRetry: () => void;
  readonly sleep?: (ms: number) => Promise<void>;
}

export class GssExchange implements GssConversation {
  private context: GssContext | undefined;

  constructor(
    private readonly provider: GssProvider,
    private readonly target: string,
    private readonly mechanism: 'gssapi' | 'sspi',
    private readonly retry: GssRetry,
  ) {}

  get complete(): boolean | undefined {
    return this.context?.complete;
  }

  async first(): Promise<Buffer | undefined> {
    const sleep = this.retry.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
    for (let attempt = 0; ; attempt++) {
      try {
        const context = await this.provider.start(this.target, this.mechanism);
        const token = toBuffer(await context.step(undefined));
        this.context = context;
        return token;
      } catch (err) {
        if (attempt >= this.retry.retries) {
          throw new ConnectionPolicyError(
            `GSSAPI (gss_provider=${this.provider.name}) could not make a token for ${this.target} after ${attempt + 1} attempt${attempt === 0 ? '' : 's'}: ${reason(err)}`,
            'gss_provider',
          );
        }
        this.retry.onRetry();
        await sleep(retryDelayMs(this.retry.baseMs, attempt));
      }
    }
  }

  async next(challenge: Buffer): Promise<Buffer | undefined> {
    if (this.context === undefined) throw new ConnectionPolicyError('GSSAPI continuation without a context', 'gss_provider');
    try {
      return toBuffer(await this.context.step(challenge));
    } catch (err) {
      throw new ConnectionPolicyError(`GSSAPI (gss_provider=${this.provider.name}) rejected the server's token for ${this.target}: ${reason(err)}`, 'gss_provider');
    }
  }
}

function toBuffer(token: GssToken | undefined | null): Buffer | undefined {
  if (token === undefined || token === null) return undefined;
  if (!(token instanceof Uint8Array)) throw new TypeError('a GSS token must be a Buffer or Uint8Array');
  return Buffer.from(token.buffer, token.byteOffset, token.byteLength);
}

function reason(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return message.split('\n')[0]!.slice(0, 300);
}
