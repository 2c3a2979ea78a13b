import type { Logger } from "pino";

/**
 * Callbacks an embedder registers (the demo, a test harness): each is called in turn, and one that throws
 * is logged without keeping the others, or the daemon, from going on.
 */
export function createFanOut<A extends unknown[]>(log: Logger, failure: string) {
  const listeners = new Set<(...args: A) => void>();
  return {
    /** Returns the unsubscribe function. */
    add(listener: (...args: A) => void): () => void {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    /** `context` goes into the log line of a listener that fails. */
    emit(args: A, context: Record<string, unknown> = {}): void {
      for (const l of [...listeners]) {
        try {
          l(...args);
        } catch (err) {
          log.error({ err, ...context }, failure);
        }
      }
    },
  };
}
