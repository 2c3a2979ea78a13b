import type { Clock, TimerHandle } from "./clock.ts";

/**
 * Runs `run` every `everyMs` on the injected clock, the next round armed only once this one is over (a slow
 * round never overlaps the next). A round that throws or rejects goes to `onError`; the rounds go on.
 */
export function every(
  clock: Clock,
  everyMs: number,
  run: () => unknown,
  onError: (err: unknown) => void,
): { start(): void; stop(): void } {
  let timer: TimerHandle | null = null;
  const again = () => {
    if (timer) schedule();
  };
  function schedule() {
    timer = clock.setTimer(everyMs, () => {
      let round: unknown;
      try {
        round = run();
      } catch (err) {
        onError(err);
      }
      // A synchronous round re-arms at once, so a fake clock advanced by several periods runs them all.
      if (round instanceof Promise) void round.catch(onError).finally(again);
      else again();
    });
  }
  return {
    start() {
      if (!timer) schedule();
    },
    stop() {
      if (timer) clock.clearTimer(timer);
      timer = null;
    },
  };
}
