import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { BusError, LockBusClient } from "../../gateway/lock-bus/lock-bus-client.ts";
import { dropAck, garble, noReply, slowReply } from "../../hardware-sim/faults.ts";
import { createSimSite, type SimSite } from "../../hardware-sim/site.ts";
import type { BoardMessage } from "../../shared/protocol/lock-bus/messages.ts";
import { FakeClock } from "../support/fake-clock.ts";

const log = pino({ level: "silent" });
const ACK_MS = 250;
const REPLY_MS = 3_000;

/** Lets the in-memory wire (setImmediate per hop) and the promise chains run; no real time passes. */
const settle = async (turns = 10) => {
  for (let i = 0; i < turns; i++) await new Promise((r) => setImmediate(r));
};

/** Resolves to the BusError a promise rejects with (fails the test if it resolves). */
async function busError(p: Promise<unknown>): Promise<BusError> {
  const err = await p.then(
    () => {
      throw new Error("expected the request to fail");
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(BusError);
  return err as BusError;
}

let cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanup.reverse()) await c();
  cleanup = [];
});

async function rig(opts: { moveMs?: number; autoStart?: boolean } = {}) {
  const clock = new FakeClock();
  const site: SimSite = createSimSite(
    {
      moveMs: opts.moveMs ?? 0,
      buses: {
        main: {
          boards: [
            { address: 1, channels: 4 },
            { address: 2, channels: 4, firmware: "2.3" },
          ],
        },
      },
    },
    { timers: clock },
  );
  const client = new LockBusClient({
    name: "main",
    path: "sim://main",
    baudRate: 115_200,
    openLink: (path, baud) => site.linkFactory(path, baud),
    clock,
    log,
    ackTimeoutMs: ACK_MS,
    replyTimeoutMs: REPLY_MS,
    minReopenMs: 500,
    maxReopenMs: 4_000,
  });
  cleanup.push(async () => {
    await client.stop();
    await site.close();
  });
  if (opts.autoStart !== false) await client.start();
  return { clock, site, client, board: (a: number) => site.board("main", a) };
}

describe("LockBusClient against the simulator: replies", () => {
  it("answers a ping with the board's firmware and channel count", async () => {
    const { client } = await rig();
    expect(client.isOpen).toBe(true);
    const reply = await client.request({ kind: "ping", addr: 2 });
    expect(reply).toMatchObject({ kind: "ping_reply", addr: 2, firmware: "2.3", channels: 4 });
  });

  it("answers a status request with the channel's live state", async () => {
    const { client, board } = await rig();
    board(1).insertItem(2);
    const reply = await client.request({ kind: "status", addr: 1, channel: 2 });
    expect(reply).toMatchObject({
      kind: "status_reply",
      addr: 1,
      channel: 2,
      latch: "locked",
      itemPresent: true,
    });
  });

  it("unlock and lock move the simulated latch and report it", async () => {
    const { client, board } = await rig();
    const unlocked = await client.request({ kind: "unlock", addr: 1, channel: 3, holdS: 0 });
    expect(unlocked).toMatchObject({ kind: "unlock_result", channel: 3, result: "ok", latch: "unlocked" });
    expect(board(1).channel(3).latch).toBe("unlocked");
    const locked = await client.request({ kind: "lock", addr: 1, channel: 3 });
    expect(locked).toMatchObject({ kind: "lock_result", channel: 3, result: "ok", latch: "locked" });
    expect(board(1).channel(3).latch).toBe("locked");
  });

  it("waits for a latch that takes time to move: ACK at once, reply after moveMs on the clock", async () => {
    const { client, clock } = await rig({ moveMs: 300 });
    let reply: BoardMessage | null = null;
    const p = client.request({ kind: "unlock", addr: 1, channel: 1, holdS: 0 }).then((r) => {
      reply = r;
    });
    await settle();
    expect(reply).toBeNull();
    // Past the ACK deadline: the ACK came, so the reply deadline (3 s) is what now counts.
    clock.advance(300);
    await p;
    expect(reply).toMatchObject({ kind: "unlock_result", result: "ok", latch: "unlocked" });
  });

  it("refuses a channel the board does not have with a NAK bad_channel", async () => {
    const { client } = await rig();
    const err = await busError(client.request({ kind: "status", addr: 1, channel: 9 }));
    expect(err.failure).toEqual({ reason: "nak", nak: "bad_channel" });
    expect(err.message).toBe("lock board 1 refused the request (bad_channel)");
  });
});

describe("LockBusClient: one transaction at a time", () => {
  it("serialises two concurrent requests: the second is sent only after the first settled, with another seq", async () => {
    const { client, board, clock } = await rig({ moveMs: 300 });
    const order: string[] = [];
    board(1).onRequest((r) => order.push(`sent ${r.kind}`));
    const first = client.request({ kind: "lock", addr: 1, channel: 1 }).then((r) => {
      order.push("first settled");
      return r;
    });
    const second = client.request({ kind: "status", addr: 1, channel: 2 }).then((r) => {
      order.push("second settled");
      return r;
    });
    await settle();
    // The lock is still moving: the board has heard only the first request.
    expect(board(1).received.map((r) => r.kind)).toEqual(["lock"]);
    clock.advance(300);
    const [a, b] = await Promise.all([first, second]);
    expect(order).toEqual(["sent lock", "first settled", "sent status", "second settled"]);
    const [lockReq, statusReq] = board(1).received;
    expect(lockReq?.seq).not.toBe(statusReq?.seq);
    expect(a.kind !== "event" && a.seq).toBe(lockReq?.seq);
    expect(b.kind !== "event" && b.seq).toBe(statusReq?.seq);
  });

  it("a failed request does not block the next one in the queue", async () => {
    const { client, board, clock } = await rig();
    const remove = board(1).use(noReply());
    const failing = busError(client.request({ kind: "ping", addr: 1 }));
    const next = client.request({ kind: "ping", addr: 2 });
    await settle();
    clock.advance(ACK_MS);
    remove();
    expect((await failing).failure.reason).toBe("no_ack");
    expect(await next).toMatchObject({ kind: "ping_reply", addr: 2 });
  });

  it("a request no longer wanted when its turn comes is not sent (a deadline passed behind a silent board)", async () => {
    const { client, board, clock } = await rig();
    board(2).turnLatch(1, "unlocked");
    const remove = board(1).use(noReply());
    const failing = busError(client.request({ kind: "ping", addr: 1 }));
    let wanted = true;
    const late = busError(
      client.request({ kind: "lock", addr: 2, channel: 1 }, { stillWanted: () => wanted }),
    );
    await settle();
    wanted = false; // while the first waits for its ACK
    clock.advance(ACK_MS);
    remove();
    expect((await failing).failure.reason).toBe("no_ack");
    const err = await late;
    expect(err.failure).toEqual({ reason: "withdrawn" });
    expect(err.message).toBe("not sent to lock board 2: its deadline passed while it waited for the bus");
    expect(board(2).received).toEqual([]);
    expect(board(2).channel(1).latch).toBe("unlocked");
  });

  it("uses seq 1..255 and never 0 (reserved for events), wrapping around", async () => {
    const { client, board } = await rig();
    for (let i = 0; i < 257; i++) await client.request({ kind: "ping", addr: 1 });
    const seqs = board(1).received.map((r) => r.seq);
    expect(seqs.slice(0, 3)).toEqual([1, 2, 3]);
    expect(seqs.slice(253)).toEqual([254, 255, 1, 2]);
    expect(seqs).not.toContain(0);
  });
});

describe("LockBusClient: faults", () => {
  it("a board that never answers fails with no_ack once the ACK deadline passes on the clock", async () => {
    const { client, board, clock } = await rig();
    board(1).use(noReply());
    let settled = false;
    const p = busError(client.request({ kind: "ping", addr: 1 })).finally(() => {
      settled = true;
    });
    await settle();
    clock.advance(ACK_MS - 1);
    await settle();
    expect(settled).toBe(false);
    clock.advance(1);
    const err = await p;
    expect(err.failure).toEqual({ reason: "no_ack" });
    expect(err.message).toBe("lock board 1 did not answer");
    expect(board(1).received).toHaveLength(1);
  });

  it("a lost ACK does not fail the request: the reply alone settles it", async () => {
    const { client, board } = await rig();
    board(1).use(dropAck());
    const reply = await client.request({ kind: "lock", addr: 1, channel: 1 });
    expect(reply).toMatchObject({ kind: "lock_result", result: "ok", latch: "locked" });
  });

  it("a reply slower than the reply deadline fails with no_reply", async () => {
    const { client, board, clock } = await rig();
    board(1).use(slowReply(REPLY_MS + 1_000));
    let settled = false;
    const p = busError(client.request({ kind: "status", addr: 1, channel: 1 })).finally(() => {
      settled = true;
    });
    await settle(); // the ACK arrives at once and arms the reply deadline
    clock.advance(REPLY_MS - 1);
    await settle();
    expect(settled).toBe(false);
    clock.advance(1);
    const err = await p;
    expect(err.failure).toEqual({ reason: "no_reply" });
    expect(err.message).toBe("lock board 1 acknowledged but did not report the result");
    // The late reply, when it finally comes, is ignored and the bus still works.
    clock.advance(1_000);
    await settle();
    expect(await client.request({ kind: "ping", addr: 2 })).toMatchObject({ kind: "ping_reply" });
  });

  it("line noise fails the request and every corrupt frame is reported as discarded", async () => {
    const { client, board, clock } = await rig();
    board(1).use(garble());
    const discarded: number[] = [];
    client.on("discarded", (n) => discarded.push(n));
    const p = busError(client.request({ kind: "ping", addr: 1 }));
    await settle();
    clock.advance(ACK_MS);
    const err = await p;
    expect(err.failure.reason).toBe("no_ack");
    // The ACK and the reply both arrived corrupted: two discards, each a whole frame's bytes.
    expect(discarded.length).toBeGreaterThanOrEqual(2);
    for (const n of discarded) expect(n).toBeGreaterThan(0);
  });
});

describe("LockBusClient: the link", () => {
  it("a request while the link is closed fails at once with link_closed", async () => {
    const { client, site } = await rig();
    await site.bus("main").unplug();
    await settle();
    expect(client.isOpen).toBe(false);
    const err = await busError(client.request({ kind: "ping", addr: 1 }));
    expect(err.failure).toEqual({ reason: "link_closed" });
    expect(err.message).toBe("the serial line to the lock boards is down");
  });

  it("unplugging fails the transaction in flight, and the client reopens with backoff after plugging back", async () => {
    const { client, site, board, clock } = await rig();
    const events: string[] = [];
    client.on("closed", () => events.push("closed"));
    client.on("open", () => events.push("open"));
    board(1).use(slowReply(10_000));
    const inFlight = busError(client.request({ kind: "status", addr: 1, channel: 1 }));
    await settle();
    await site.bus("main").unplug();
    const err = await inFlight;
    expect(err.failure).toEqual({ reason: "link_closed" });
    expect(events).toEqual(["closed"]);

    // First reopen after 500 ms: the cable is still out, so it fails and the wait doubles to 1 s.
    clock.advance(500);
    await settle();
    expect(client.isOpen).toBe(false);
    await site.bus("main").plugIn();
    clock.advance(999);
    await settle();
    expect(client.isOpen).toBe(false);
    clock.advance(1);
    await settle();
    expect(client.isOpen).toBe(true);
    expect(events).toEqual(["closed", "open"]);
    expect(await client.request({ kind: "ping", addr: 2 })).toMatchObject({ kind: "ping_reply", addr: 2 });
  });

  it("the reopen backoff doubles up to maxReopenMs and resets once a link has stayed open", async () => {
    const { client, site, clock } = await rig();
    await site.bus("main").unplug();
    await settle();
    // 500, 1000, 2000, 4000 (cap), 4000 …: 11.5 s of failed attempts.
    for (const wait of [500, 1_000, 2_000, 4_000, 4_000]) {
      clock.advance(wait - 1);
      await settle();
      expect(client.isOpen).toBe(false);
      clock.advance(1);
      await settle();
      expect(client.isOpen).toBe(false);
    }
    await site.bus("main").plugIn();
    clock.advance(4_000);
    await settle();
    expect(client.isOpen).toBe(true);
    // A drop after the link has been open a while (maxReopenMs) starts again at the minimum.
    clock.advance(4_000);
    await site.bus("main").unplug();
    await site.bus("main").plugIn();
    await settle();
    expect(client.isOpen).toBe(false);
    clock.advance(500);
    await settle();
    expect(client.isOpen).toBe(true);
  });

  it("recycle() closes the link and it is reopened after the minimum backoff", async () => {
    const { client, clock } = await rig();
    client.recycle();
    await settle();
    expect(client.isOpen).toBe(false);
    clock.advance(500);
    await settle();
    expect(client.isOpen).toBe(true);
  });

  it("emits unsolicited board events as `event` and does not feed them to a transaction", async () => {
    const { client, board } = await rig();
    const seen: BoardMessage[] = [];
    client.on("event", (e) => seen.push(e));
    board(2).insertItem(3);
    board(1).turnLatch(4, "unlocked");
    await settle();
    expect(seen).toEqual([
      { kind: "event", addr: 2, channel: 3, event: "item_inserted" },
      { kind: "event", addr: 1, channel: 4, event: "latch_unlocked" },
    ]);
    expect(await client.request({ kind: "ping", addr: 1 })).toMatchObject({ kind: "ping_reply" });
  });

  it("stop() closes the link, fails the transaction in flight and never reopens", async () => {
    const { client, site, board, clock } = await rig();
    board(1).use(noReply());
    const inFlight = busError(client.request({ kind: "ping", addr: 1 }));
    await settle();
    await client.stop();
    expect((await inFlight).failure).toEqual({ reason: "link_closed" });
    expect(client.isOpen).toBe(false);
    clock.advance(60_000);
    await settle();
    expect(client.isOpen).toBe(false);
    // The port is free again: anyone may open it (a held port would answer EBUSY).
    const again = await site.linkFactory("sim://main");
    again.destroy();
  });

  it("stop() while the link is still opening leaves it closed and the port free", async () => {
    const { client, site } = await rig({ autoStart: false });
    const starting = client.start();
    await client.stop();
    await starting;
    await settle();
    expect(client.isOpen).toBe(false);
    const again = await site.linkFactory("sim://main");
    again.destroy();
  });
});
