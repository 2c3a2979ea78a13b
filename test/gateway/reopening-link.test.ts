import { describe, expect, it } from "vitest";
import type { SerialLinkFactory } from "../../gateway/ports.ts";
import { ReopeningLink } from "../../gateway/serial/reopening-link.ts";
import { createLinkPair, type LinkPair } from "../../hardware-sim/links.ts";
import { FakeClock } from "../support/fake-clock.ts";

/** Lets promise chains and the in-memory cable (setImmediate) run; no time passes on the fake clock. */
const settle = async (turns = 5) => {
  for (let i = 0; i < turns; i++) await new Promise((r) => setImmediate(r));
};

/** A device that is missing until plugged; each open while present hands out a fresh cable. */
function device() {
  let present = false;
  const cables: LinkPair[] = [];
  const open: SerialLinkFactory = () => {
    if (!present) return Promise.reject(new Error("ENOENT: no such device"));
    const pair = createLinkPair();
    cables.push(pair);
    return Promise.resolve(pair.host);
  };
  return {
    open,
    cables,
    plug: (on: boolean) => {
      present = on;
    },
  };
}

function rig() {
  const clock = new FakeClock();
  const dev = device();
  const line = new ReopeningLink({
    path: "/dev/ttyTEST",
    baudRate: 9600,
    openLink: dev.open,
    clock,
    minReopenMs: 500,
    maxReopenMs: 4_000,
  });
  const events: string[] = [];
  line.on("open", () => events.push("open"));
  line.on("closed", () => events.push("closed"));
  line.on("openFailed", () => events.push("failed"));
  /** Moves the clock to just before, then to, the next attempt; returns whether it opened. */
  const attemptAfter = async (ms: number) => {
    clock.advance(ms - 1);
    await settle();
    const early = events.length;
    clock.advance(1);
    await settle();
    return { tried: events.length > early, open: line.isOpen };
  };
  return { clock, dev, line, events, attemptAfter };
}

describe("ReopeningLink (the lock-bus client's and the readers' serial line)", () => {
  it("retries a missing device with waits that double up to the cap, then opens it", async () => {
    const r = rig();
    await r.line.start();
    expect(r.events).toEqual(["failed"]);
    for (const wait of [500, 1_000, 2_000, 4_000, 4_000])
      expect(await r.attemptAfter(wait)).toEqual({ tried: true, open: false });
    r.dev.plug(true);
    expect(await r.attemptAfter(4_000)).toEqual({ tried: true, open: true });
    expect(r.events.at(-1)).toBe("open");
    await r.line.stop();
  });

  it("reopens a lost link after the minimum wait again, with a fresh link", async () => {
    const r = rig();
    r.dev.plug(true);
    await r.line.start();
    const first = r.line.link;
    r.dev.cables[0]?.unplug();
    await settle();
    expect(r.line.isOpen).toBe(false);
    expect(await r.attemptAfter(500)).toEqual({ tried: true, open: true });
    expect(r.line.link).not.toBe(first);
    expect(r.events).toEqual(["open", "closed", "open"]);
    await r.line.stop();
  });

  it("retries a link that drops as soon as it opens with growing waits; one that stayed open starts over", async () => {
    const r = rig();
    const waits: number[] = [];
    r.line.on("waiting", (ms) => waits.push(ms));
    r.dev.plug(true);
    await r.line.start();
    // A peer that accepts and hangs up at once (a device server without its device): five drops in a row.
    for (let n = 0; n < 5; n++) {
      r.dev.cables.at(-1)?.unplug();
      await settle();
      expect(await r.attemptAfter(waits.at(-1) as number)).toEqual({ tried: true, open: true });
    }
    expect(waits).toEqual([500, 1_000, 2_000, 4_000, 4_000]);
    // Open for longer than the cap: its loss is news, not a flap, and the first wait is short again.
    r.clock.advance(4_000);
    r.dev.cables.at(-1)?.unplug();
    await settle();
    expect(waits.at(-1)).toBe(500);
    await r.line.stop();
  });

  it("reopens after the minimum wait when its owner recycles it, however short the link lived", async () => {
    const r = rig();
    const waits: number[] = [];
    r.line.on("waiting", (ms) => waits.push(ms));
    r.dev.plug(true);
    await r.line.start();
    r.dev.cables.at(-1)?.unplug();
    await settle();
    expect(await r.attemptAfter(500)).toEqual({ tried: true, open: true });
    r.line.recycle();
    await settle();
    expect(waits).toEqual([500, 500]);
    await r.line.stop();
  });

  it("stops for good: closes the link and never tries again", async () => {
    const r = rig();
    r.dev.plug(true);
    await r.line.start();
    const cable = r.dev.cables[0];
    await r.line.stop();
    expect(cable?.host.destroyed).toBe(true);
    r.clock.advance(60_000);
    await settle();
    expect(r.events).toEqual(["open"]);
    expect(r.clock.pendingTimers()).toBe(0);
  });

  it("releases a device that finished opening after stop()", async () => {
    const r = rig();
    r.dev.plug(true);
    const starting = r.line.start();
    await r.line.stop();
    await starting;
    expect(r.line.isOpen).toBe(false);
    expect(r.dev.cables[0]?.host.destroyed).toBe(true);
  });
});
