/**
 * Waits on a condition that changes when something happens (bytes arrive, a callback runs): each event
 * calls `notify()`, and `until(done)` resolves the first time `done()` holds. No polling, no sleeping; the
 * test's own timeout is the only ceiling.
 */
export class Signal {
  private readonly waiters = new Set<() => void>();

  notify(): void {
    for (const w of [...this.waiters]) w();
  }

  until(done: () => boolean): Promise<void> {
    if (done()) return Promise.resolve();
    return new Promise((resolve) => {
      const check = () => {
        if (!done()) return;
        this.waiters.delete(check);
        resolve();
      };
      this.waiters.add(check);
    });
  }
}
