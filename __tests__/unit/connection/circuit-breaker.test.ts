/** gss_circuit_*: opens after threshold failures in the window, fails fast while open, half-opens after the cooldown. */
import { CircuitBreaker } from '../../../lib/db/connection/circuit-breaker';
import { GssCircuitOpenError } from '../../../lib/db/connection/connection-policy-error';
import { retryDelayMs } from '../../../lib/db/connection/retry-delay';
import { thrown } from '../support/thrown';

function clock() {
  let now = 1000;
  return { now: () => now, advance: (ms: number) => void (now += ms) };
}

describe('CircuitBreaker', () => {
  it('opens after `threshold` failures within the window, and only then', () => {
    const c = clock();
    const breaker = new CircuitBreaker({ threshold: 3, windowMs: 1000, cooldownMs: 5000 }, c.now);
    breaker.settle('failure', breaker.admit());
    c.advance(600);
    breaker.settle('failure', breaker.admit());
    c.advance(600); // the first failure left the window
    breaker.settle('failure', breaker.admit());
    expect(breaker.isOpen).toBe(false);
    breaker.settle('failure', breaker.admit());
    expect(breaker.isOpen).toBe(true);
    expect(breaker.openings).toBe(1);
    const e = thrown(() => breaker.admit(), GssCircuitOpenError);
    expect(e.retryAfterMs).toBe(5000);
  });

  it('lets one trial through after the cooldown; success closes it, failure reopens it', () => {
    const c = clock();
    const breaker = new CircuitBreaker({ threshold: 1, windowMs: 1000, cooldownMs: 2000 }, c.now);
    breaker.settle('failure', breaker.admit());
    c.advance(1999);
    thrown(() => breaker.admit(), GssCircuitOpenError);
    c.advance(1);
    const trial = breaker.admit();
    expect(trial).toBe(true);
    thrown(() => breaker.admit(), GssCircuitOpenError); // one trial at a time
    breaker.settle('failure', trial);
    expect(breaker.openings).toBe(2);
    c.advance(2000);
    breaker.settle('success', breaker.admit());
    expect(breaker.isOpen).toBe(false);
    expect(breaker.admit()).toBe(false);
  });

  it('ignores attempts without a GSS exchange; a success clears earlier failures', () => {
    const c = clock();
    const breaker = new CircuitBreaker({ threshold: 2, windowMs: 10000, cooldownMs: 100 }, c.now);
    breaker.settle('failure', breaker.admit());
    breaker.settle('neutral', breaker.admit());
    breaker.settle('success', breaker.admit());
    breaker.settle('failure', breaker.admit());
    expect(breaker.isOpen).toBe(false);
  });
});

describe('retryDelayMs', () => {
  it('is base x 2^attempt capped at 5 s, plus a jitter that never shortens it', () => {
    expect([0, 1, 2, 3].map((a) => retryDelayMs(150, a, () => 0))).toEqual([150, 300, 600, 1200]);
    expect(retryDelayMs(150, 10, () => 0)).toBe(5000);
    for (let i = 0; i < 200; i++) {
      const d = retryDelayMs(150, 1);
      expect(d).toBeGreaterThanOrEqual(300);
      expect(d).toBeLessThan(330);
    }
    expect(retryDelayMs(150, 20, () => 0.999)).toBeLessThan(5500);
  });
});
