/**
 * Circuit breakers, one per upstream (or platform model), in memory per process: each proxy
 * process learns on its own that an upstream is failing (N processes send at most N trial
 * requests per open period). Closed → `threshold` consecutive failures → open (skipped) for
 * `openMs` → half-open: one trial request; its success closes the circuit, its failure opens it
 * again for another `openMs`.
 */
export interface CircuitOptions {
  /** Consecutive failures that open the circuit. */
  threshold: number;
  /** How long an open circuit is skipped, ms. */
  openMs: number;
  now?: () => number;
}

interface Circuit {
  failures: number;
  /** 0 = closed; otherwise skipped until this instant. */
  openUntil: number;
  /** A half-open trial is in flight since this instant (0 = none). */
  trialSince: number;
}

export class CircuitBreakers {
  private readonly circuits = new Map<string, Circuit>();
  private readonly now: () => number;

  constructor(private readonly options: CircuitOptions) {
    this.now = options.now ?? Date.now;
  }

  /**
   * Whether a request may go to `id` now. For a half-open circuit the first caller gets the trial
   * (and true); others get false until it reports. A trial that never reports frees the slot after
   * another `openMs`.
   */
  tryAcquire(id: string): boolean {
    const circuit = this.circuits.get(id);
    if (!circuit || circuit.openUntil === 0) return true;
    const now = this.now();
    if (now < circuit.openUntil) return false;
    if (circuit.trialSince !== 0 && now - circuit.trialSince < this.options.openMs) return false;
    circuit.trialSince = now;
    return true;
  }

  /** True when `id` would be skipped now (no side effect). */
  isOpen(id: string): boolean {
    const circuit = this.circuits.get(id);
    if (!circuit || circuit.openUntil === 0) return false;
    const now = this.now();
    return now < circuit.openUntil || (circuit.trialSince !== 0 && now - circuit.trialSince < this.options.openMs);
  }

  success(id: string): void {
    this.circuits.delete(id);
  }

  failure(id: string): void {
    let circuit = this.circuits.get(id);
    if (!circuit) {
      circuit = { failures: 0, openUntil: 0, trialSince: 0 };
      this.circuits.set(id, circuit);
    }
    circuit.failures++;
    // A failed trial reopens at once; a closed circuit opens at the threshold.
    if (circuit.openUntil !== 0 || circuit.failures >= this.options.threshold) {
      circuit.openUntil = this.now() + this.options.openMs;
      circuit.trialSince = 0;
    }
  }

  /** State for diagnostics and tests. */
  state(id: string): 'closed' | 'open' | 'half-open' {
    const circuit = this.circuits.get(id);
    if (!circuit || circuit.openUntil === 0) return 'closed';
    return this.now() < circuit.openUntil ? 'open' : 'half-open';
  }
}
