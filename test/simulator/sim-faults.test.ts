import { afterEach, describe, expect, it } from "vitest";
import { assertReceivedHostRequest } from "../../hardware-sim/expectations.ts";
import {
  brownout,
  deepSleep,
  dropAck,
  garble,
  jam,
  lightSleep,
  noReply,
  slowReply,
} from "../../hardware-sim/faults.ts";
import { HostProbe } from "../../hardware-sim/host-probe.ts";
import { createLinkPair, type LinkPair } from "../../hardware-sim/links.ts";
import { LockBoard } from "../../hardware-sim/lock-controller.ts";
import { FakeClock } from "../support/fake-clock.ts";

const settle = async (turns = 5) => {
  for (let i = 0; i < turns; i++) await new Promise((r) => setImmediate(r));
};

let pairs: LinkPair[] = [];
afterEach(() => {
  for (const p of pairs) p.unplug();
  pairs = [];
});

/** A board on its own link with a fake clock, so every delay is stepped, never slept. */
function rig() {
  const pair = createLinkPair();
  pairs.push(pair);
  const clock = new FakeClock();
  const board = new LockBoard({ address: 3, channels: 4, moveMs: 0, timers: clock });
  board.attach(pair.device);
  return { board, clock, host: new HostProbe(pair.host) };
}

describe("fault presets", () => {
  it("noReply: the board hears the request but sends neither ACK nor reply", async () => {
    const { board, host } = rig();
    board.use(noReply());
    host.send({ kind: "ping", addr: 3, seq: 1 });
    await settle();
    expect(host.messages).toEqual([]);
    expect(assertReceivedHostRequest(board, (r) => r.kind === "ping").seq).toBe(1);
  });

  it("dropAck: the reply arrives without its ACK", async () => {
    const { board, host } = rig();
    board.use(dropAck());
    host.send({ kind: "lock", addr: 3, seq: 2, channel: 1 });
    await host.next((m) => m.kind === "lock_result");
    expect(host.messages.map((m) => m.kind)).toEqual(["lock_result"]);
  });

  it("slowReply: the ACK comes at once, the reply only after the delay", async () => {
    const { board, clock, host } = rig();
    board.use(slowReply(2_500));
    host.send({ kind: "status", addr: 3, seq: 4, channel: 1 });
    await host.next((m) => m.kind === "ack");
    clock.advance(2_499);
    await settle();
    expect(host.messages.map((m) => m.kind)).toEqual(["ack"]);
    clock.advance(1);
    expect(await host.next((m) => m.kind === "status_reply")).toMatchObject({ seq: 4 });
  });

  it("garble: the host's parser discards the bytes on the checksum and decodes nothing", async () => {
    const { board, host } = rig();
    board.use(garble());
    host.send({ kind: "ping", addr: 3, seq: 5 });
    await settle();
    expect(host.messages).toEqual([]);
    expect(host.discards.length).toBeGreaterThan(0);
    expect(host.discards[0]?.reason).toBe("bad_checksum");
    expect(board.received).toHaveLength(1);
  });

  it("jam: a movement answers result jammed and raises EVENT jammed; STATUS shows the fault", async () => {
    const { board, host } = rig();
    board.use(jam(2));
    const { ack, reply } = await host.request({ kind: "unlock", addr: 3, seq: 6, channel: 2, holdS: 0 });
    expect(ack.kind).toBe("ack");
    expect(reply).toEqual({
      kind: "unlock_result",
      addr: 3,
      seq: 6,
      channel: 2,
      result: "jammed",
      latch: "locked",
    });
    expect(await host.next((m) => m.kind === "event")).toEqual({
      kind: "event",
      addr: 3,
      channel: 2,
      event: "jammed",
    });
    expect((await host.request({ kind: "status", addr: 3, seq: 7, channel: 2 })).reply).toMatchObject({
      jammed: true,
    });
    // Other channels still move.
    expect(
      (await host.request({ kind: "unlock", addr: 3, seq: 8, channel: 1, holdS: 0 })).reply,
    ).toMatchObject({
      result: "ok",
    });
  });

  it("brownout: silent for the outage, then EVENT reset on channel 0, then answering again", async () => {
    const { board, clock, host } = rig();
    board.use(brownout(1_000));
    host.send({ kind: "ping", addr: 3, seq: 9 });
    board.insertItem(1); // an event during the outage is lost with the power
    await settle();
    expect(host.messages).toEqual([]);
    clock.advance(1_000);
    expect(await host.next((m) => m.kind === "event")).toEqual({
      kind: "event",
      addr: 3,
      channel: 0,
      event: "reset",
    });
    expect((await host.request({ kind: "ping", addr: 3, seq: 10 })).reply?.kind).toBe("ping_reply");
  });

  it("brownout during another: silent until the later one ends, then one reset and answering again", async () => {
    const { board, clock, host } = rig();
    board.use(brownout(1_000));
    clock.advance(500);
    board.use(brownout(1_000)); // the power dips again before it came back
    clock.advance(999);
    host.send({ kind: "ping", addr: 3, seq: 9 });
    await settle();
    expect(host.messages).toEqual([]);
    clock.advance(1);
    expect(await host.next((m) => m.kind === "event")).toMatchObject({ kind: "event", event: "reset" });
    expect((await host.request({ kind: "ping", addr: 3, seq: 10 })).reply?.kind).toBe("ping_reply");
    expect(host.messages.filter((m) => m.kind === "event")).toHaveLength(1);
  });

  it("brownout: a movement in progress is forgotten, its reply never sent", async () => {
    const { board, clock, host } = rig();
    board.moveMs = 300;
    host.send({ kind: "unlock", addr: 3, seq: 11, channel: 1, holdS: 0 });
    await host.next((m) => m.kind === "ack");
    board.use(brownout(100));
    clock.advance(1_000);
    await settle();
    expect(host.messages.map((m) => m.kind)).toEqual(["ack", "event"]);
    expect(board.channel(1).latch).toBe("locked");
  });

  it("lightSleep: the waking request is answered only after the wake time, later ones at once", async () => {
    const { board, clock, host } = rig();
    board.use(lightSleep(200, 1_000));
    host.send({ kind: "ping", addr: 3, seq: 12 });
    await settle();
    clock.advance(199);
    await settle();
    expect(host.messages).toEqual([]);
    clock.advance(1);
    expect((await host.next((m) => "seq" in m && m.seq === 12)).kind).toBe("ack");
    expect((await host.request({ kind: "ping", addr: 3, seq: 13 })).reply?.kind).toBe("ping_reply");

    clock.advance(1_000); // idle long enough to doze off again
    host.send({ kind: "ping", addr: 3, seq: 14 });
    await settle();
    expect(host.messages.some((m) => "seq" in m && m.seq === 14)).toBe(false);
    clock.advance(200);
    expect((await host.next((m) => "seq" in m && m.seq === 14)).kind).toBe("ack");
  });

  it("deepSleep: nothing is answered until wake()", async () => {
    const { board, host } = rig();
    const sleep = deepSleep();
    board.use(sleep);
    host.send({ kind: "ping", addr: 3, seq: 15 });
    board.turnLatch(1, "unlocked");
    await settle();
    expect(host.messages).toEqual([]);
    sleep.wake();
    expect(sleep.asleep).toBe(false);
    expect((await host.request({ kind: "ping", addr: 3, seq: 16 })).reply?.kind).toBe("ping_reply");
  });

  it("a removed fault stops applying", async () => {
    const { board, host } = rig();
    const remove = board.use(noReply());
    remove();
    expect((await host.request({ kind: "ping", addr: 3, seq: 17 })).reply?.kind).toBe("ping_reply");
  });
});
