import { AppError } from "../../shared/api/errors.ts";
import type { Clock, TimerHandle } from "../../shared/time/clock.ts";

/**
 * Runs a read with a deadline on the injected clock: past it the caller gets 504 ERRORS.SERVICE_TIMED_OUT
 * instead of waiting on a slow store (spec: whitelist entity and target reads answer 504). The query itself
 * is not cancelled; its late answer is dropped.
 */
export async function withDeadline<T>(clock: Clock, ms: number, read: () => Promise<T>): Promise<T> {
  let timer: TimerHandle | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = clock.setTimer(ms, () =>
      reject(new AppError("ERRORS.SERVICE_TIMED_OUT", "The whitelist store did not answer in time")),
    );
  });
  try {
    return await Promise.race([read(), expired]);
  } finally {
    if (timer) clock.clearTimer(timer);
  }
}
