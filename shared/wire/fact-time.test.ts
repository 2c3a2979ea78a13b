import { describe, expect, it } from "vitest";
import { factTime } from "./fact-time.ts";

const NOW = new Date("2026-01-15T10:00:00.000Z");

describe("a gateway's fact on the cloud's clock", () => {
  it("is the gateway's estimate of the cloud's time, whatever its wall clock said", () => {
    const msg = { observed_at: "2026-01-14T09:59:58.000Z", observed_cloud_at: "2026-01-15T09:59:58.000Z" };
    expect(factTime(msg, NOW)).toBe("2026-01-15T09:59:58.000Z");
  });

  it("falls back to the gateway's wall clock when it had no estimate", () => {
    expect(factTime({ observed_at: "2026-01-15T09:00:00.000Z" }, NOW)).toBe("2026-01-15T09:00:00.000Z");
  });

  it("is never later than the cloud's now (a wall clock ahead cannot date a fact in the future)", () => {
    expect(factTime({ observed_at: "2026-01-16T10:00:00.000Z" }, NOW)).toBe(NOW.toISOString());
  });
});
