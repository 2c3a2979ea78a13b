import { afterEach, describe, expect, it } from "vitest";
import { LockBus } from "../../hardware-sim/bus.ts";
import { assertReceivedHostRequest, expectHostRequest } from "../../hardware-sim/expectations.ts";
import { HostProbe } from "../../hardware-sim/host-probe.ts";
import { createLinkPair, type LinkPair } from "../../hardware-sim/links.ts";
import { LockBoard, type LockBoardOptions } from "../../hardware-sim/lock-controller.ts";
import { encodeFrame } from "../../shared/protocol/lock-bus/frame.ts";
import { FakeClock } from "../support/fake-clock.ts";

/** Lets the in-memory link deliver (it hands bytes over on setImmediate). */
const settle = async (turns = 5) => {
  for (let i = 0; i < turns; i++) await new Promise((r) => setImmediate(r));
};

let pairs: LinkPair[] = [];
afterEach(() => {
  for (const p of pairs) p.unplug();
  pairs = [];
});

function rig(opts: Partial<LockBoardOptions> = {}) {
  const pair = createLinkPair();
  pairs.push(pair);
  const board = new LockBoard({ address: 5, channels: 4, moveMs: 0, ...opts });
  board.attach(pair.device);
  return { board, host: new HostProbe(pair.host) };
}

describe("simulated lock board", () => {
  it("answers PING with ACK then its firmware and channel count, both echoing the SEQ", async () => {
    const { host } = rig({ firmware: "2.7" });
    const { ack, reply } = await host.request({ kind: "ping", addr: 5, seq: 41 });
    expect(ack).toEqual({ kind: "ack", addr: 5, seq: 41 });
    expect(reply).toEqual({ kind: "ping_reply", addr: 5, seq: 41, firmware: "2.7", channels: 4 });
    expect(host.messages.map((m) => m.kind)).toEqual(["ack", "ping_reply"]);
  });

  it("reports a channel's latch, item, door and fault bits in STATUS", async () => {
    const { board, host } = rig();
    board.turnLatch(2, "unlocked");
    board.openDoor(2);
    board.insertItem(2);
    board.setTamper(2, true);
    const { reply } = await host.request({ kind: "status", addr: 5, seq: 7, channel: 2 });
    expect(reply).toEqual({
      kind: "status_reply",
      addr: 5,
      seq: 7,
      channel: 2,
      latch: "unlocked",
      itemPresent: true,
      doorOpen: true,
      jammed: false,
      tamper: true,
    });
  });

  it("unlocks and locks a channel, replying with the result and the latch position", async () => {
    const { board, host } = rig();
    const unlocked = await host.request({ kind: "unlock", addr: 5, seq: 1, channel: 3, holdS: 0 });
    expect(unlocked.reply).toEqual({
      kind: "unlock_result",
      addr: 5,
      seq: 1,
      channel: 3,
      result: "ok",
      latch: "unlocked",
    });
    expect(board.channel(3).latch).toBe("unlocked");
    const locked = await host.request({ kind: "lock", addr: 5, seq: 2, channel: 3 });
    expect(locked.reply).toMatchObject({ kind: "lock_result", seq: 2, result: "ok", latch: "locked" });
  });

  it("refuses to lock a locker whose door stands open", async () => {
    const { board, host } = rig();
    await host.request({ kind: "unlock", addr: 5, seq: 1, channel: 1, holdS: 0 });
    expect(board.openDoor(1)).toBe(true);
    const { reply } = await host.request({ kind: "lock", addr: 5, seq: 2, channel: 1 });
    expect(reply).toMatchObject({ kind: "lock_result", result: "door_open", latch: "unlocked" });
  });

  it("switches channel power and answers no_power to movements while off", async () => {
    const { host } = rig();
    const power = await host.request({ kind: "power", addr: 5, seq: 3, channel: 1, on: false });
    expect(power.reply).toEqual({ kind: "power_result", addr: 5, seq: 3, channel: 1, on: false });
    const { reply } = await host.request({ kind: "unlock", addr: 5, seq: 4, channel: 1, holdS: 0 });
    expect(reply).toMatchObject({ result: "no_power", latch: "locked" });
  });

  it("NAKs a channel it does not have and a command it does not know", async () => {
    const { host } = rig();
    const bad = await host.request({ kind: "lock", addr: 5, seq: 9, channel: 5 });
    expect(bad).toEqual({ ack: { kind: "nak", addr: 5, seq: 9, reason: "bad_channel" }, reply: null });
    host.sendRaw(encodeFrame({ addr: 5, seq: 10, cmd: 0x33, payload: new Uint8Array() }));
    expect(await host.next((m) => "seq" in m && m.seq === 10)).toEqual({
      kind: "nak",
      addr: 5,
      seq: 10,
      reason: "unknown_command",
    });
  });

  it("stays silent to frames for other addresses and to corrupt frames", async () => {
    const { board, host } = rig();
    host.send({ kind: "ping", addr: 6, seq: 1 });
    const corrupt = encodeFrame({ addr: 5, seq: 2, cmd: 0x01, payload: new Uint8Array() });
    corrupt[5] = (corrupt[5] as number) ^ 0x55;
    host.sendRaw(corrupt);
    await settle();
    expect(host.messages).toEqual([]);
    expect(board.received).toEqual([]);
    // Still in sync afterwards: the next good frame is answered.
    expect((await host.request({ kind: "ping", addr: 5, seq: 3 })).reply?.kind).toBe("ping_reply");
  });

  it("ACKs at once, replies after the movement time and NAKs busy meanwhile", async () => {
    const clock = new FakeClock();
    const { host } = rig({ moveMs: 300, timers: clock });
    host.send({ kind: "unlock", addr: 5, seq: 1, channel: 1, holdS: 0 });
    await host.next((m) => m.kind === "ack" && m.seq === 1);
    host.send({ kind: "status", addr: 5, seq: 2, channel: 1 });
    expect(await host.next((m) => "seq" in m && m.seq === 2)).toMatchObject({ kind: "nak", reason: "busy" });
    clock.advance(299);
    await settle();
    expect(host.messages.some((m) => m.kind === "unlock_result")).toBe(false);
    clock.advance(1);
    expect(await host.next((m) => m.kind === "unlock_result")).toMatchObject({ seq: 1, result: "ok" });
  });

  it("reports door, item and tamper changes as events with SEQ 0", async () => {
    const { board, host } = rig();
    expect(board.openDoor(1)).toBe(false); // latched: the door stays shut, nothing to report
    board.turnLatch(1, "unlocked");
    board.openDoor(1);
    board.insertItem(1);
    board.removeItem(1);
    board.closeDoor(1);
    board.setTamper(4, true);
    await settle();
    const events = host.messages.map((m) => (m.kind === "event" ? `${m.channel}:${m.event}` : m.kind));
    expect(events).toEqual([
      "1:latch_unlocked",
      "1:door_opened",
      "1:item_inserted",
      "1:item_removed",
      "1:door_closed",
      "4:tamper",
    ]);
  });

  it("re-locks a door lock after UNLOCK's hold time and sends EVENT latch_locked", async () => {
    const clock = new FakeClock();
    const { board, host } = rig({ doors: [2], timers: clock });
    await host.request({ kind: "unlock", addr: 5, seq: 1, channel: 2, holdS: 5 });
    clock.advance(4_999);
    await settle();
    expect(board.channel(2).latch).toBe("unlocked");
    clock.advance(1);
    expect(await host.next((m) => m.kind === "event")).toEqual({
      kind: "event",
      addr: 5,
      channel: 2,
      event: "latch_locked",
    });
    expect(board.channel(2).latch).toBe("locked");
  });

  it("waits for a door held open past its hold time to shut before re-locking", async () => {
    const clock = new FakeClock();
    const { board, host } = rig({ doors: [1], timers: clock });
    await host.request({ kind: "unlock", addr: 5, seq: 1, channel: 1, holdS: 2 });
    board.openDoor(1);
    clock.advance(2_000);
    expect(board.channel(1).latch).toBe("unlocked");
    board.closeDoor(1);
    await settle();
    const events = host.messages
      .filter((m) => m.kind === "event")
      .map((m) => (m.kind === "event" ? m.event : ""));
    expect(events).toEqual(["door_opened", "door_closed", "latch_locked"]);
  });

  it("ignores the hold time on a locker channel", async () => {
    const clock = new FakeClock();
    const { board, host } = rig({ timers: clock });
    await host.request({ kind: "unlock", addr: 5, seq: 1, channel: 1, holdS: 3 });
    clock.advance(10_000);
    await settle();
    expect(board.channel(1).latch).toBe("unlocked");
    expect(host.messages.some((m) => m.kind === "event")).toBe(false);
  });

  it("lets a prepended behaviour answer instead of the firmware, or pass the request on", async () => {
    const { board, host } = rig();
    board.use({
      name: "fakeFirmware",
      onHostRequest: (req, ctx) => {
        if (req.kind !== "ping") return undefined;
        ctx.send({ kind: "ack", addr: 5, seq: req.seq });
        ctx.send({ kind: "ping_reply", addr: 5, seq: req.seq, firmware: "9.9", channels: 1 });
        return "handled";
      },
    });
    expect((await host.request({ kind: "ping", addr: 5, seq: 1 })).reply).toMatchObject({ firmware: "9.9" });
    expect((await host.request({ kind: "status", addr: 5, seq: 2, channel: 1 })).reply?.kind).toBe(
      "status_reply",
    );
  });

  it("logs host requests for expectations, awaited or after the fact", async () => {
    const { board, host } = rig();
    const expected = expectHostRequest(board, (r) => r.kind === "lock" && r.channel === 2);
    host.send({ kind: "status", addr: 5, seq: 1, channel: 2 });
    host.send({ kind: "lock", addr: 5, seq: 2, channel: 2 });
    expect(await expected).toEqual({ kind: "lock", addr: 5, seq: 2, channel: 2 });
    expect(assertReceivedHostRequest(board, (r) => r.kind === "status").seq).toBe(1);
    expect(() => assertReceivedHostRequest(board, (r) => r.kind === "power")).toThrow(
      /no matching host request/,
    );
    await expect(expectHostRequest(board, (r) => r.kind === "power", 30)).rejects.toThrow(/within 30 ms/);
  });
});

describe("several boards on one bus", () => {
  it("each board answers only its own address, frames arriving whole", async () => {
    const pair = createLinkPair();
    pairs.push(pair);
    const bus = new LockBus("bus0", [
      new LockBoard({ address: 1, channels: 8, moveMs: 0 }),
      new LockBoard({ address: 2, channels: 4, moveMs: 0, firmware: "3.1" }),
    ]);
    bus.attach(pair.device);
    const host = new HostProbe(pair.host);
    const one = await host.request({ kind: "ping", addr: 1, seq: 10 });
    const two = await host.request({ kind: "ping", addr: 2, seq: 11 });
    expect(one.reply).toMatchObject({ addr: 1, channels: 8 });
    expect(two.reply).toMatchObject({ addr: 2, channels: 4, firmware: "3.1" });
    expect(host.messages.map((m) => `${m.addr}:${m.kind}`)).toEqual([
      "1:ack",
      "1:ping_reply",
      "2:ack",
      "2:ping_reply",
    ]);
    expect(bus.board(1).received.map((r) => r.seq)).toEqual([10]);
    expect(bus.board(2).received.map((r) => r.seq)).toEqual([11]);

    // Events from both boards at once still reach the host as whole frames.
    bus.board(1).turnLatch(1, "unlocked");
    bus.board(2).turnLatch(4, "unlocked");
    await settle();
    expect(host.discards).toEqual([]);
    expect(host.messages.filter((m) => m.kind === "event").map((m) => m.addr)).toEqual([1, 2]);
  });
});
