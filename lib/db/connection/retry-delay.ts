/**
 * Delay before GSS retry number `attempt` (0-based): gss_retry_base_ms x 2^attempt, capped at
 * 5 s, plus an additive jitter of up to a tenth of that, so that pooled connections failing
 * together do not retry in lockstep. The result is never shorter than the un-jittered delay.
 */
export const RETRY_DELAY_CAP_MS = 5000;

export function retryDelayMs(baseMs: number, attempt: number, random: () => number = Math.random): number {
  const delay = Math.min(RETRY_DELAY_CAP_MS, baseMs * 2 ** attempt);
  return delay + Math.floor(random() * (delay / 10));
}
