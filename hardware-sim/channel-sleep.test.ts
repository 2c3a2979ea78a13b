import { describe, expect, it } from "vitest";
import { encodeFrame } from "../shared/protocol/lock-bus/frame.ts";
import { FrameParser } from "../shared/protocol/lock-bus/frame-parser.ts";
import {
  type BoardMessage,
  decodeBoardMessage,
  type HostRequest,
  hostRequestFrame,
} from "../shared/protocol/lock-bus/messages.ts";
import { FakeClock } from "../test/support/fake-clock.ts";
import { LockBoard, type LockBoardOptions } from "./lock-controller.ts";
import { createSimSite } from "./site.ts";

/** A request as the test writes it: the rig fills in the board's address and the next SEQ. */
type Req = HostRequest extends infer R ? (R extends HostRequest ? Omit<R, "seq" | "addr"> : never) : never;

/**
 * A board wired straight to the test (no link): bytes it sends are decoded at once, each message stamped
 * with the fake clock's time, so a wake-up delay shows as a difference between stamps.
 */
function rig(opts: Partial<LockBoardOptions> = {}) {
  const clock = new FakeClock();
  const start = clock.now().getTime();
  const board = new LockBoard({ address: 3, channels: 4, moveMs: 0, timers: clock, ...opts });
  const heard: { at: number; msg: BoardMessage }[] = [];
  const parser = new FrameParser((f) => {
    const msg = decodeBoardMessage(f);
    if (msg.kind !== "invalid") heard.push({ at: clock.now().getTime() - start, msg });
  });
  board.connect((bytes) => parser.push(bytes));
  let seq = 0;
  const send = (req: Req) => {
    const full = { ...req, addr: 3, seq: ++seq } as HostRequest;
    board.receive(encodeFrame(hostRequestFrame(full)));
    return full.seq;
  };
  const answersTo = (s: number) => heard.filter((h) => h.msg.kind !== "event" && h.msg.seq === s);
  const events = () =>
    heard.flatMap((h) => (h.msg.kind === "event" ? [`${h.msg.channel}:${h.msg.event}@${h.at}`] : []));
  return { clock, board, heard, send, answersTo, events };
}

describe("power save on a simulated lock board", () => {
  it("a channel in light sleep answers a request, ACK first, only after its wake-up time, and says it woke", () => {
    const r = rig({ powerSave: { wakeMs: 500 } });
    r.board.sleep(2, "light");
    expect(r.events()).toEqual(["2:light_sleep@0"]);
    const s = r.send({ kind: "unlock", channel: 2, holdS: 0 });
    expect(r.answersTo(s)).toEqual([]);
    r.clock.advance(499);
    expect(r.answersTo(s)).toEqual([]);
    r.clock.advance(1);
    expect(r.answersTo(s).map((h) => [h.msg.kind, h.at])).toEqual([
      ["ack", 500],
      ["unlock_result", 500],
    ]);
    expect(r.events()).toEqual(["2:light_sleep@0", "2:awake@500"]);
    expect(r.board.sleepState(2)).toBe("awake");
    expect(r.board.channel(2).latch).toBe("unlocked");
    // Awake now: the next request is answered at once.
    const next = r.send({ kind: "status", channel: 2 });
    expect(r.answersTo(next).map((h) => h.at)).toEqual([500, 500]);
  });

  it("requests that arrive while a channel wakes are all answered once it is awake, in order", () => {
    const r = rig({ powerSave: { wakeMs: 300 } });
    r.board.sleep(1, "light");
    const a = r.send({ kind: "status", channel: 1 });
    r.clock.advance(100);
    const b = r.send({ kind: "lock", channel: 1 });
    r.clock.advance(200);
    expect(r.answersTo(a).map((h) => h.at)).toEqual([300, 300]);
    expect(r.answersTo(b).map((h) => [h.msg.kind, h.at])).toEqual([
      ["ack", 300],
      ["lock_result", 300],
    ]);
    expect(r.events()).toEqual(["1:light_sleep@0", "1:awake@300"]);
  });

  it("a channel in deep sleep answers nothing at all, whatever the wait; the board and its other channels still do", () => {
    const r = rig();
    r.board.turnLatch(3, "unlocked");
    r.board.sleep(3, "deep");
    const s = r.send({ kind: "lock", channel: 3 });
    r.clock.advance(60_000);
    expect(r.answersTo(s)).toEqual([]);
    expect(r.board.channel(3).latch).toBe("unlocked");
    expect(r.board.received.at(-1)).toMatchObject({ kind: "lock", channel: 3 });
    const ping = r.send({ kind: "ping" });
    expect(r.answersTo(ping).map((h) => h.msg.kind)).toEqual(["ack", "ping_reply"]);
    const other = r.send({ kind: "status", channel: 4 });
    expect(r.answersTo(other).map((h) => h.msg.kind)).toEqual(["ack", "status_reply"]);
  });

  it("a local interaction wakes a deep sleeper: the wake-up is announced before what was done", () => {
    const r = rig();
    r.board.turnLatch(1, "unlocked");
    r.board.sleep(1, "deep");
    r.board.insertItem(1);
    expect(r.events()).toEqual(["1:latch_unlocked@0", "1:deep_sleep@0", "1:awake@0", "1:item_inserted@0"]);
    const s = r.send({ kind: "lock", channel: 1 });
    expect(r.answersTo(s).map((h) => h.msg.kind)).toEqual(["ack", "lock_result"]);
    // wake() is the same interaction, for a test or the console; on an awake channel it changes nothing.
    r.board.sleep(1, "deep");
    expect(r.board.wake(1)).toBe(true);
    expect(r.board.wake(1)).toBe(false);
  });

  it("power-save channels fall asleep after idleMs without activity; a request or an interaction restarts the count", () => {
    const r = rig({ powerSave: { light: [1], deep: [2], idleMs: 1_000, wakeMs: 200 } });
    r.clock.advance(600);
    r.send({ kind: "status", channel: 1 });
    r.clock.advance(400);
    expect(r.events()).toEqual(["2:deep_sleep@1000"]);
    r.clock.advance(600);
    expect(r.events()).toEqual(["2:deep_sleep@1000", "1:light_sleep@1600"]);
    expect([r.board.sleepState(1), r.board.sleepState(2), r.board.sleepState(3)]).toEqual([
      "light",
      "deep",
      "awake",
    ]);
    // Channel 3 has no power save: it never sleeps by itself.
    r.board.openDoor(2);
    r.clock.advance(999);
    expect(r.board.sleepState(2)).toBe("awake");
    r.clock.advance(1);
    expect(r.board.sleepState(2)).toBe("deep");
  });

  it("a power loss wakes every channel; a request with a bad channel is refused as before", () => {
    const r = rig();
    r.board.sleep(2, "deep");
    r.board.reset();
    expect(r.board.sleepState(2)).toBe("awake");
    const s = r.send({ kind: "status", channel: 9 });
    expect(r.answersTo(s)).toMatchObject([{ msg: { kind: "nak", reason: "bad_channel" } }]);
  });

  it("in a site, a tap on the reader that belongs to a lock wakes its channel", async () => {
    const clock = new FakeClock();
    const site = createSimSite(
      {
        moveMs: 0,
        buses: { bus0: { boards: [{ address: 1, channels: 2, powerSave: { deep: [2] } }] } },
        readers: { "reader-2": { aliveMs: false, wakes: { bus: "bus0", board: 1, channel: 2 } } },
      },
      { timers: clock },
    );
    try {
      const board = site.board("bus0", 1);
      board.sleep(2, "deep");
      site.reader("reader-2").tap("04a1b2c3d4");
      expect(board.sleepState(2)).toBe("awake");
    } finally {
      await site.close();
    }
    expect(() =>
      createSimSite({ readers: { r: { wakes: { bus: "nowhere", board: 1, channel: 1 } } } }),
    ).toThrow(/bus "nowhere"/);
  });
});
