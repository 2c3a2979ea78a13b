import { EventEmitter } from "node:events";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { openGatewayDb } from "../../gateway/adapters/sqlite/open-db.ts";
import { SqliteOutbox } from "../../gateway/adapters/sqlite/outbox.ts";
import { createOutboxPump } from "../../gateway/features/outbox-pump.ts";
import type { BrokerLinkEvents, Pending } from "../../gateway/ports.ts";
import { CloudClock, SESSION_SYNC_WAIT_MS } from "../../gateway/time/cloud-clock.ts";
import type { Monotonic } from "../../shared/time/clock.ts";
import type { UpMessage } from "../../shared/wire/messages.ts";
import { FakeClock } from "../support/fake-clock.ts";

const log = pino({ level: "silent" });
const RESEND_MS = 10_000;

const settle = async (turns = 10) => {
  for (let i = 0; i < turns; i++) await new Promise((r) => setImmediate(r));
};

/**
 * Stands in for the pump's side of the BrokerLink port: records every publishUp, and can be told to fail
 * the next publishes or to hold them (a QoS 1 PUBACK that has not come yet) until released.
 */
class FakeBroker extends EventEmitter<BrokerLinkEvents> {
  connected = false;
  readonly published: number[] = [];
  readonly messages: UpMessage[] = [];
  private readonly failing = new Set<number>();
  private holding = false;
  private readonly held: (() => void)[] = [];

  publishUp(msg: UpMessage): Promise<void> {
    if (this.failing.delete(msg.seq)) return Promise.reject(new Error("publish failed"));
    this.published.push(msg.seq);
    this.messages.push(msg);
    if (!this.holding) return Promise.resolve();
    return new Promise<void>((resolve) => this.held.push(resolve));
  }

  /** The next publish of each of these seqs fails (once). */
  failOnce(...seqs: number[]) {
    for (const s of seqs) this.failing.add(s);
  }

  hold() {
    this.holding = true;
  }

  /** Stops holding and lets every held publish complete. */
  release() {
    this.holding = false;
    for (const r of this.held.splice(0)) r();
  }

  connect() {
    this.connected = true;
    this.emit("connected");
  }

  disconnect() {
    this.connected = false;
    this.emit("disconnected");
  }

  ack(...seqs: number[]) {
    this.emit("ack", seqs, false);
  }

  /** An ack as the cloud sends it now: naming the outbox the seqs were numbered in. */
  ackFor(outboxId: string, ...seqs: number[]) {
    this.emit("ack", seqs, false, outboxId);
  }

  /** The cloud's "resend" request after it (re)subscribed. */
  askResend() {
    this.emit("ack", [], true);
  }

  /** Forgets what was published so far. */
  reset() {
    this.published.length = 0;
  }
}

let cleanup: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanup.reverse()) c();
  cleanup = [];
});

function rig(opts: { connected?: boolean; batch?: number } = {}) {
  const dir = mkdtempSync(path.join(tmpdir(), "gw-pump-"));
  const db = openGatewayDb(dir);
  const clock = new FakeClock();
  const outbox = new SqliteOutbox(db, "gw-pump", clock);
  const broker = new FakeBroker();
  broker.connected = opts.connected ?? true;
  const pump = createOutboxPump({
    outbox,
    broker,
    clock,
    monotonic: clock,
    log,
    resendAfterMs: RESEND_MS,
    batch: opts.batch,
  });
  cleanup.push(() => {
    pump.stop();
    db.close();
    rmSync(dir, { recursive: true, force: true });
  });
  let n = 0;
  const append = (count = 1) => {
    const seqs: number[] = [];
    for (let i = 0; i < count; i++) {
      const m: Pending = {
        type: "hardware_event",
        device_id: null,
        source: "main/1/1",
        event: "door_opened",
        detail: `event ${++n}`,
      };
      seqs.push(outbox.append(m).seq);
    }
    return seqs;
  };
  return { clock, outbox, broker, pump, append };
}

describe("outbox pump", () => {
  it("publishes every pending row in seq order on start when connected", async () => {
    const r = rig();
    r.append(5);
    r.pump.start();
    await settle();
    expect(r.broker.published).toEqual([1, 2, 3, 4, 5]);
  });

  it("publishes rows appended later, as they come, without repeating earlier ones", async () => {
    const r = rig();
    r.pump.start();
    r.append(2);
    await settle();
    r.append(1);
    await settle();
    expect(r.broker.published).toEqual([1, 2, 3]);
  });

  it("walks through more rows than one batch holds, in order", async () => {
    const r = rig({ batch: 2 });
    r.append(5);
    r.pump.start();
    await settle();
    expect(r.broker.published).toEqual([1, 2, 3, 4, 5]);
  });

  it("publishes nothing while disconnected, and everything once connected", async () => {
    const r = rig({ connected: false });
    r.pump.start();
    r.append(3);
    await settle();
    r.clock.advance(RESEND_MS * 3);
    await settle();
    expect(r.broker.published).toEqual([]);
    r.broker.connect();
    await settle();
    expect(r.broker.published).toEqual([1, 2, 3]);
  });

  it("an ack deletes exactly the rows it names, and acknowledged rows are never sent again", async () => {
    const r = rig();
    r.pump.start();
    r.append(4);
    await settle();
    r.broker.ack(1, 3);
    expect(r.outbox.pending().map((m) => m.seq)).toEqual([2, 4]);
    r.broker.reset();
    r.broker.disconnect();
    r.broker.connect();
    await settle();
    expect(r.broker.published).toEqual([2, 4]);
  });

  it("resends every unacknowledged row from the start after a reconnect", async () => {
    const r = rig();
    r.pump.start();
    r.append(3);
    await settle();
    r.broker.disconnect();
    r.append(1); // written while offline: not sent now
    await settle();
    expect(r.broker.published).toEqual([1, 2, 3]);
    r.broker.reset();
    r.broker.connect();
    await settle();
    expect(r.broker.published).toEqual([1, 2, 3, 4]);
  });

  it("resends every unconfirmed row at once when the cloud asks after resubscribing", async () => {
    const r = rig();
    r.pump.start();
    r.append(3);
    await settle();
    r.broker.ack(1);
    await settle();
    r.broker.reset();
    r.broker.askResend();
    await settle();
    expect(r.broker.published).toEqual([2, 3]);
  });

  it("resends rows left unacknowledged for resendAfterMs, on the clock", async () => {
    const r = rig();
    r.pump.start();
    r.append(2);
    await settle();
    r.broker.ack(1);
    r.broker.reset();
    // The check runs every resendAfterMs; a row sent at t=0 is stale at the first check.
    r.clock.advance(RESEND_MS - 1);
    await settle();
    expect(r.broker.published).toEqual([]);
    r.clock.advance(1);
    await settle();
    expect(r.broker.published).toEqual([2]);
    // Acknowledged now: later checks send nothing more.
    r.broker.ack(2);
    r.broker.reset();
    r.clock.advance(RESEND_MS * 3);
    await settle();
    expect(r.broker.published).toEqual([]);
  });

  it("a wall clock set back (NTP stepping it) does not hold the resends: waits are elapsed time", async () => {
    const r = rig();
    r.pump.start();
    r.append(2);
    await settle();
    r.broker.reset();
    r.clock.setWall(r.clock.now().getTime() - 12 * 3_600_000);
    r.clock.advance(RESEND_MS);
    await settle();
    expect(r.broker.published).toEqual([1, 2]);
  });

  it("does not resend a row that was sent recently, even when an older check falls due", async () => {
    const r = rig();
    r.pump.start();
    r.clock.advance(RESEND_MS / 2);
    r.append(1); // sent at 5 s
    await settle();
    r.broker.reset();
    r.clock.advance(RESEND_MS / 2); // first check at 10 s: only 5 s old
    await settle();
    expect(r.broker.published).toEqual([]);
    r.clock.advance(RESEND_MS); // second check at 20 s: 15 s old
    await settle();
    expect(r.broker.published).toEqual([1]);
  });

  it("a publish failure stops the batch; the rows are sent again later", async () => {
    const r = rig();
    r.append(4);
    r.broker.failOnce(2);
    r.pump.start();
    await settle();
    // Row 1 went out, row 2 failed, and the batch stopped there: 3 and 4 were not tried.
    expect(r.broker.published).toEqual([1]);
    expect(r.outbox.pending().map((m) => m.seq)).toEqual([1, 2, 3, 4]);
    r.clock.advance(RESEND_MS);
    await settle();
    expect(r.broker.published).toEqual([1, 1, 2, 3, 4]);
  });

  it("a failure on the first row of the outbox is retried by the timer, with no new append or reconnect", async () => {
    const r = rig();
    r.append(3);
    r.broker.failOnce(1);
    r.pump.start();
    await settle();
    expect(r.broker.published).toEqual([]);
    r.clock.advance(RESEND_MS);
    await settle();
    expect(r.broker.published).toEqual([1, 2, 3]);
  });

  it("a failure after earlier rows were acknowledged is retried by the timer too", async () => {
    const r = rig();
    r.pump.start();
    r.append(1);
    await settle();
    r.broker.ack(1);
    r.broker.failOnce(2);
    r.append(2); // row 2 fails, row 3 is never tried
    await settle();
    expect(r.broker.published).toEqual([1]);
    r.clock.advance(RESEND_MS);
    await settle();
    expect(r.broker.published).toEqual([1, 2, 3]);
  });

  it("one publish at a time: while a PUBACK is pending nothing else is sent, then the rest follows", async () => {
    const r = rig();
    r.pump.start();
    r.broker.hold();
    r.append(1);
    await settle();
    r.append(2);
    await settle();
    expect(r.broker.published).toEqual([1]);
    r.broker.release();
    await settle();
    expect(r.broker.published).toEqual([1, 2, 3]);
  });

  it("a reconnect while a publish is still pending resends from the start once it completes", async () => {
    const r = rig();
    r.pump.start();
    r.append(2);
    await settle();
    expect(r.broker.published).toEqual([1, 2]);
    r.broker.hold();
    r.append(1); // row 3's PUBACK is lost with the connection
    await settle();
    r.broker.disconnect();
    r.broker.connect();
    await settle();
    r.broker.reset();
    r.broker.release();
    await settle();
    // Rows 1 and 2 were sent on the old connection and never acknowledged: they must go again.
    expect(r.broker.published).toEqual([1, 2, 3]);
  });

  it("an ack naming another outbox (the store before the state was lost) confirms nothing", async () => {
    const r = rig();
    r.pump.start();
    r.append(2);
    await settle();
    r.broker.ackFor("0b9f1c2e-5d7a-4e3b-9c1d-2f4a6b8c0d1e", 1, 2);
    expect(r.outbox.pending().map((m) => m.seq)).toEqual([1, 2]);
    // Still unconfirmed, so sent again at the next check; an ack naming this outbox then confirms them.
    r.broker.reset();
    r.clock.advance(RESEND_MS);
    await settle();
    expect(r.broker.published).toEqual([1, 2]);
    r.broker.ackFor(r.outbox.id, 1, 2);
    expect(r.outbox.pending()).toEqual([]);
    r.broker.reset();
    r.clock.advance(RESEND_MS * 3);
    await settle();
    expect(r.broker.published).toEqual([]);
  });

  it("backs off while the cloud acknowledges nothing: each resend doubles the wait, up to 2 minutes", async () => {
    const r = rig();
    r.pump.start();
    r.append(2);
    await settle();
    r.broker.reset();
    /** The instants (s) at which the rows went again, over `seconds` of the clock, checked every 10 s. */
    const resends = async (seconds: number) => {
      const at: number[] = [];
      for (let t = 0; t < seconds; t += RESEND_MS / 1000) {
        r.clock.advance(RESEND_MS);
        await settle();
        if (r.broker.published.length) at.push(t + RESEND_MS / 1000);
        r.broker.reset();
      }
      return at;
    };
    // Sent at 0; again at 10 s, then after 20, 40, 80 and 120 s (the cap), and every 120 s from there.
    expect(await resends(400)).toEqual([10, 30, 70, 150, 270, 390]);
  });

  it("an ack, or a new connection, ends the backoff: the next unacknowledged row waits resendAfterMs", async () => {
    const r = rig();
    r.pump.start();
    r.append(2);
    await settle();
    for (let k = 0; k < 7; k++) {
      r.clock.advance(RESEND_MS); // resends at 10, 30 and 70 s: the wait is 80 s now
      await settle();
    }
    r.broker.ack(1);
    r.broker.reset();
    r.clock.advance(RESEND_MS); // row 2, sent at 70 s, is 10 s old at 80 s
    await settle();
    expect(r.broker.published).toEqual([2]);
    for (let k = 0; k < 3; k++) {
      r.clock.advance(RESEND_MS); // again at 100 s: the wait is 40 s
      await settle();
    }
    r.broker.disconnect();
    r.broker.connect();
    await settle();
    r.broker.reset();
    r.clock.advance(RESEND_MS);
    await settle();
    expect(r.broker.published).toEqual([2]);
  });

  it("stop() detaches: nothing is published afterwards", async () => {
    const r = rig();
    r.pump.start();
    r.pump.stop();
    r.append(2);
    r.broker.connect();
    r.clock.advance(RESEND_MS * 2);
    await settle();
    expect(r.broker.published).toEqual([]);
  });
});

describe("outbox pump: facts observed before the gateway knew the cloud's time", () => {
  function datingRig() {
    const dir = mkdtempSync(path.join(tmpdir(), "gw-pump-"));
    const db = openGatewayDb(dir);
    const clock = new FakeClock();
    const cloudTime = new CloudClock({ clock, monotonic: clock });
    const outbox = new SqliteOutbox(db, "gw-pump", clock, () => cloudTime.cloudNow(), {
      monotonic: clock,
      at: (mono) => cloudTime.dateMono(mono),
    });
    const broker = new FakeBroker();
    const pump = createOutboxPump({ outbox, broker, clock, monotonic: clock, log, cloudTime });
    pump.start();
    cleanup.push(() => {
      pump.stop();
      db.close();
      rmSync(dir, { recursive: true, force: true });
    });
    const event: Pending = {
      type: "hardware_event",
      device_id: null,
      source: "main/1/1",
      event: "door_opened",
      detail: "",
    };
    /** The link comes up: the session starts (CONNACK), then the pump hears of it. */
    const connect = async () => {
      cloudTime.sessionStarted();
      broker.connect();
      await settle();
    };
    return { clock, cloudTime, outbox, broker, event, connect };
  }

  it("go up once this session's answer came, dated on the cloud's clock at the instant observed", async () => {
    const r = datingRig();
    const seq = r.outbox.append(r.event).seq;
    expect(r.outbox.pending()[0]?.observed_cloud_at).toBeUndefined();
    r.clock.advance(60_000);
    await r.connect();
    expect(r.broker.published).toEqual([]);
    // The cloud's clock runs an hour ahead of this gateway's wall clock.
    const cloudNow = r.clock.now().getTime() + 3_600_000;
    r.cloudTime.observe(new Date(cloudNow).toISOString(), true);
    await settle();
    expect(r.broker.published).toEqual([seq]);
    expect(r.broker.messages[0]).toMatchObject({
      observed_cloud_at: new Date(cloudNow - 60_000).toISOString(),
    });
  });

  it("go up as they are when no answer comes within the session's sync wait", async () => {
    const r = datingRig();
    const seq = r.outbox.append(r.event).seq;
    await r.connect();
    r.clock.advance(SESSION_SYNC_WAIT_MS - 1);
    await settle();
    expect(r.broker.published).toEqual([]);
    r.clock.advance(1);
    await settle();
    expect(r.broker.published).toEqual([seq]);
    expect(r.broker.messages[0]?.observed_cloud_at).toBeUndefined();
  });

  it("a row left by a daemon killed before it knew the cloud's time is dated by the next on the same boot", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "gw-pump-"));
    cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
    const clock = new FakeClock();
    const start = (monotonic: Monotonic) => {
      const db = openGatewayDb(dir);
      const cloudTime = new CloudClock({ clock, monotonic });
      const dating = { monotonic, at: (mono: number) => cloudTime.dateMono(mono) };
      return {
        db,
        cloudTime,
        outbox: new SqliteOutbox(db, "gw-pump", clock, () => cloudTime.cloudNow(), dating),
      };
    };
    const killed = start(clock);
    killed.outbox.append(datingRig().event);
    killed.db.close();
    clock.advance(20_000);
    const next = start(clock);
    expect(next.outbox.pending()[0]?.observed_cloud_at).toBeUndefined();
    // The cloud's clock runs an hour ahead of this gateway's wall clock.
    const cloudNow = clock.now().getTime() + 3_600_000;
    next.cloudTime.observe(new Date(cloudNow).toISOString(), true);
    expect(next.outbox.pending()[0]?.observed_cloud_at).toBe(new Date(cloudNow - 20_000).toISOString());
    next.db.close();
    // After a reboot the instant means nothing: the row keeps its wall-clock observed_at alone.
    const rebooted = start({ nowMs: () => 0, boot: "another boot" });
    rebooted.cloudTime.observe(new Date(cloudNow).toISOString(), true);
    expect(rebooted.outbox.pending()[0]?.observed_cloud_at).toBeUndefined();
    rebooted.db.close();
  });

  it("rows dated when appended go at once", async () => {
    const r = datingRig();
    r.cloudTime.observe(r.clock.now().toISOString(), true);
    const seq = r.outbox.append(r.event).seq;
    await r.connect();
    expect(r.broker.published).toEqual([seq]);
  });
});
