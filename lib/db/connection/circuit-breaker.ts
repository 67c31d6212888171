/**
 * The local GSS circuit (gss_circuit_threshold / _window_ms / _cooldown_ms): after `threshold`
 * GSS connection failures within a rolling `windowMs`, new connections fail fast for `cooldownMs`
 * instead of hammering the KDC and the server. After the cooldown one trial connection is let
 * through (half-open): its success closes the circuit, its failure opens it again.
 * In: outcomes of connection attempts. Out: admit or GssCircuitOpenError. Never: blocks longer
 * than the cooldown without a trial.
 */
import { GssCircuitOpenError } from './connection-policy-error';

export interface CircuitOptions {
  readonly threshold: number;
  readonly windowMs: number;
  readonly cooldownMs: number;
}

type State = 'closed' | 'open' | 'half-open';

/** What one admitted attempt reports back, exactly once. */
export type CircuitOutcome = 'success' | 'failure' | 'neutral';

export class CircuitBreaker {
  private state: State = 'closed';
  private failures: number[] = [];
  private openUntil = 0;
  private trialInFlight = false;
  /** How often the circuit opened (for /metrics). */
  openings = 0;

  constructor(
    private readonly options: CircuitOptions,
    private readonly now: () => number = Date.now,
  ) {}

  get isOpen(): boolean {
    return this.state !== 'closed';
  }

  /**
   * Throws GssCircuitOpenError while open. Returns whether this attempt is the half-open trial;
   * the caller reports its outcome with settle().
   */
  admit(): boolean {
    if (this.state === 'closed') return false;
    const now = this.now();
    if (this.state === 'open' && now < this.openUntil) throw new GssCircuitOpenError(this.openUntil - now);
    if (this.trialInFlight) throw new GssCircuitOpenError(Math.min(1000, this.options.cooldownMs));
    this.state = 'half-open';
    this.trialInFlight = true;
    return true;
  }

  settle(outcome: CircuitOutcome, trial: boolean): void {
    if (trial) this.trialInFlight = false;
    switch (outcome) {
      case 'success':
        this.state = 'closed';
        this.failures = [];
        return;
      case 'failure': {
        const now = this.now();
        if (this.state === 'half-open') return this.open(now);
        this.failures = this.failures.filter((t) => now - t < this.options.windowMs);
        this.failures.push(now);
        if (this.state === 'closed' && this.failures.length >= this.options.threshold) this.open(now);
        return;
      }
      case 'neutral':
        // No GSS exchange happened (e.g. the server was unreachable or asked for SCRAM): it says
        // nothing about the KDC, so a half-open circuit waits for the next trial.
        if (trial && this.state === 'half-open') this.state = 'open';
        return;
    }
  }

  /** Milliseconds until a trial is allowed, 0 when closed. */
  retryAfterMs(): number {
    return this.state === 'closed' ? 0 : Math.max(0, this.openUntil - this.now());
  }

  private open(now: number): void {
    this.state = 'open';
    this.openUntil = now + this.options.cooldownMs;
    this.failures = [];
    this.openings++;
  }
}
