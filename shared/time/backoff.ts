/**
 * Waits between attempts to reach something that went away (a serial device, the broker): the first wait
 * is `minMs`, each failed attempt doubles it, never beyond `maxMs`, and a success starts over. With
 * `jitter`, each wait is drawn at random up to the current bound (full jitter), so a site of gateways
 * does not retry in lockstep after a shared outage.
 */
export class Backoff {
  private bound: number;

  constructor(private readonly o: { minMs: number; maxMs: number; jitter?: () => number }) {
    if (o.minMs <= 0 || o.maxMs < o.minMs) throw new RangeError(`bad backoff bounds ${o.minMs}–${o.maxMs}`);
    this.bound = o.minMs;
  }

  /** The wait before the next attempt; the one after will be longer, up to the cap. */
  next(): number {
    const bound = this.bound;
    this.bound = Math.min(bound * 2, this.o.maxMs);
    return this.o.jitter ? Math.round(this.o.jitter() * bound) : bound;
  }

  /** What the next wait will be at most. */
  get upcoming(): number {
    return this.bound;
  }

  reset(): void {
    this.bound = this.o.minMs;
  }
}
