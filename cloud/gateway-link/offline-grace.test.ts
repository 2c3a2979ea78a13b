import { describe, expect, it } from "vitest";
import type { Status } from "../../shared/wire/messages.ts";
import { FakeClock } from "../../test/support/fake-clock.ts";
import { createOfflineGrace, OFFLINE_GRACE_MS } from "./offline-grace.ts";

const will = (sync: string): Status => ({
  gateway_id: "gw-1",
  online: false,
  at: "2026-01-15T09:00:00.000Z",
  sync,
});

describe("offline grace", () => {
  it("applies each offline once its grace has passed, as of when it arrived, each on its own", () => {
    const clock = new FakeClock();
    const applied: [string | undefined, string][] = [];
    const offlines = createOfflineGrace({
      clock,
      apply: (st, at) => {
        applied.push([st.sync, at.toISOString()]);
        return Promise.resolve();
      },
    });
    const first = clock.now().toISOString();
    offlines.hold(will("session-1"));
    clock.advance(1_000);
    offlines.hold(will("session-2"));
    clock.advance(OFFLINE_GRACE_MS - 1_001);
    expect(applied).toEqual([]);
    clock.advance(1);
    expect(applied).toEqual([["session-1", first]]);
    clock.advance(1_000);
    expect(applied).toEqual([
      ["session-1", first],
      ["session-2", new Date(Date.parse(first) + 1_000).toISOString()],
    ]);
  });

  it("drops what waits when stopped, and gives what is being applied", async () => {
    const clock = new FakeClock();
    let release = () => {};
    const applied: string[] = [];
    const offlines = createOfflineGrace({
      clock,
      apply: (st) =>
        new Promise<void>((resolve) => {
          release = () => {
            applied.push(st.sync ?? "");
            resolve();
          };
        }),
    });
    offlines.hold(will("session-1"));
    clock.advance(OFFLINE_GRACE_MS);
    offlines.hold(will("session-2"));
    const inFlight = offlines.stop();
    expect(inFlight).toHaveLength(1);
    release();
    await Promise.all(inFlight);
    clock.advance(OFFLINE_GRACE_MS);
    expect(applied).toEqual(["session-1"]);
    expect(clock.pendingTimers()).toBe(0);
  });
});
