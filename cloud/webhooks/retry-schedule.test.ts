import { describe, expect, it } from "vitest";
import { afterFailure, DEAD_AFTER_MS, MAX_RETRY_MS, retryDelayMs } from "./retry-schedule.ts";

const queuedAt = new Date("2026-01-15T10:00:00.000Z");
const at = (ms: number) => new Date(queuedAt.getTime() + ms);

describe("the webhook retry schedule", () => {
  it("waits 5 s after the first failure and twice as long after each further one", () => {
    expect([1, 2, 3, 4, 5, 6].map(retryDelayMs)).toEqual([5_000, 10_000, 20_000, 40_000, 80_000, 160_000]);
  });

  it("never waits more than an hour, however many attempts failed", () => {
    expect(retryDelayMs(11)).toBe(MAX_RETRY_MS);
    expect(retryDelayMs(10)).toBe(2_560_000);
    expect(retryDelayMs(1_000)).toBe(MAX_RETRY_MS);
  });

  it("schedules the next attempt after the backoff while the message is younger than a day", () => {
    expect(afterFailure({ attempts: 3, queuedAt, now: at(60_000) })).toEqual({
      kind: "retry",
      at: at(60_000 + 20_000),
    });
  });

  it("pulls the last retry in to the end of the day, then gives the message up", () => {
    const late = at(DEAD_AFTER_MS - 600_000);
    expect(afterFailure({ attempts: 20, queuedAt, now: late })).toEqual({
      kind: "retry",
      at: at(DEAD_AFTER_MS),
    });
    expect(afterFailure({ attempts: 21, queuedAt, now: at(DEAD_AFTER_MS) })).toEqual({ kind: "dead" });
  });

  it("makes 34 attempts in the day for a receiver that never answers", () => {
    let now = queuedAt;
    let attempts = 0;
    for (;;) {
      attempts++;
      const next = afterFailure({ attempts, queuedAt, now });
      if (next.kind === "dead") break;
      now = next.at;
    }
    expect(now).toEqual(at(DEAD_AFTER_MS));
    expect(attempts).toBe(34);
  });
});
