import type { Logger } from "pino";
import type { TapHandler } from "./handle-tap.ts";

/**
 * Hands each card a reader delivers to the tap handler, and keeps the taps still being decided so a stop
 * can wait for them: none is left half-recorded.
 */
export function createTapDispatch(taps: Pick<TapHandler, "handle">, log: Logger) {
  const inFlight = new Set<Promise<unknown>>();
  return {
    decide(reader: string, alias: string, card: string): void {
      const t = taps
        .handle(reader, alias, card)
        .catch((err: unknown) => log.error({ err, reader }, "tap not decided"));
      inFlight.add(t);
      void t.finally(() => inFlight.delete(t));
    },
    /** Resolves once every tap taken so far is decided (or failed). */
    async settled(): Promise<void> {
      await Promise.allSettled([...inFlight]);
    },
  };
}
