import { describe, expect, it, vi } from "vitest";
import { FakeClock } from "../../test/support/fake-clock.ts";
import { createWatchdog } from "./watchdog.ts";

/** Lets the promise chains started by a timer (health check, notify) run to the end. */
const settle = () => new Promise((r) => setImmediate(r));

function setup(isHealthy: () => boolean | Promise<boolean>) {
  const clock = new FakeClock();
  const notify = vi.fn();
  const log = { warn: vi.fn(), info: vi.fn() };
  const dog = createWatchdog({ notify, intervalMs: 15_000, isHealthy, clock, log });
  /** Moves time one interval at a time, letting each tick's promises settle as real time would. */
  const advance = async (ms: number) => {
    for (let left = ms; left > 0; left -= 15_000) {
      clock.advance(Math.min(left, 15_000));
      await settle();
    }
  };
  return { clock, notify, log, dog, advance };
}

describe("createWatchdog", () => {
  it("sends WATCHDOG=1 once per interval while healthy, not before the first interval", async () => {
    const { notify, dog, advance } = setup(() => true);
    dog.start();
    await advance(14_999);
    expect(notify).not.toHaveBeenCalled();
    await advance(1);
    expect(notify).toHaveBeenCalledTimes(1);
    expect(notify).toHaveBeenLastCalledWith("WATCHDOG=1");
    await advance(45_000);
    expect(notify).toHaveBeenCalledTimes(4);
  });

  it("withholds pings while unhealthy and resumes when healthy again, logging each change once", async () => {
    let healthy = true;
    const { notify, dog, log, advance } = setup(() => healthy);
    dog.start();
    await advance(15_000);
    expect(notify).toHaveBeenCalledTimes(1);
    healthy = false;
    await advance(60_000);
    expect(notify).toHaveBeenCalledTimes(1);
    expect(log.warn).toHaveBeenCalledTimes(1);
    healthy = true;
    await advance(15_000);
    expect(notify).toHaveBeenCalledTimes(2);
    expect(log.info).toHaveBeenCalledTimes(1);
  });

  it("takes an async check, and a check that throws or rejects as unhealthy", async () => {
    let mode: "ok" | "throw" | "reject" = "ok";
    const { notify, dog, advance } = setup(() => {
      if (mode === "throw") throw new Error("db closed");
      return mode === "reject" ? Promise.reject(new Error("timeout")) : Promise.resolve(true);
    });
    dog.start();
    await advance(15_000);
    expect(notify).toHaveBeenCalledTimes(1);
    mode = "throw";
    await advance(15_000);
    mode = "reject";
    await advance(15_000);
    expect(notify).toHaveBeenCalledTimes(1);
  });

  it("stops pinging while a health check hangs, so systemd restarts a stuck daemon", async () => {
    let release: (v: boolean) => void = () => {};
    let hang = false;
    const isHealthy = vi.fn(() => (hang ? new Promise<boolean>((r) => (release = r)) : true));
    const { notify, dog, advance } = setup(isHealthy);
    dog.start();
    await advance(15_000);
    hang = true;
    await advance(15_000);
    await advance(60_000);
    expect(notify).toHaveBeenCalledTimes(1);
    // The hung check is not stacked up: one pending call, not one per interval.
    expect(isHealthy).toHaveBeenCalledTimes(2);
    hang = false;
    release(true);
    await settle();
    await advance(15_000);
    expect(notify).toHaveBeenCalledTimes(3);
  });

  it("does not ping after stop(), even for a check that was already running", async () => {
    let release: (v: boolean) => void = () => {};
    const { notify, dog, advance } = setup(() => new Promise<boolean>((r) => (release = r)));
    dog.start();
    await advance(15_000);
    dog.stop();
    release(true);
    await settle();
    await advance(60_000);
    expect(notify).not.toHaveBeenCalled();
    expect(dog.running).toBe(false);
  });

  it("refuses an interval that is not positive", () => {
    expect(() =>
      createWatchdog({ notify: () => {}, intervalMs: 0, isHealthy: () => true, clock: new FakeClock() }),
    ).toThrow(/intervalMs/);
  });
});
