import { randomBytes } from "node:crypto";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listAudit } from "../../cloud/audit/audit-log.ts";
import { applyManifest, derivedId } from "../../cloud/manifest/apply-manifest.ts";
import { SiteManifest } from "../../cloud/manifest/manifest-schema.ts";
import { listWebhookEndpoints, webhookLog } from "../../cloud/webhooks/operator-commands.ts";
import { retryDelayMs } from "../../cloud/webhooks/retry-schedule.ts";
import { recordSiteEvent } from "../../cloud/webhooks/site-events.ts";
import { startWebhookDelivery, type WebhookDelivery } from "../../cloud/webhooks/webhook-delivery.ts";
import { WEBHOOK_TIMEOUT_MS } from "../../cloud/webhooks/webhook-sender.ts";
import type { Clock, TimerHandle } from "../../shared/time/clock.ts";
import { type CloudHarness, startCloudHarness } from "../support/cloud-harness.ts";
import { eventually } from "../support/eventually.ts";
import { FakeClock } from "../support/fake-clock.ts";
import { OP_A } from "../support/fixture-site.ts";
import { type ReceivedWebhook, WebhookReceiver } from "../support/webhook-receiver.ts";

// Webhook receivers that misbehave, side by side at one operator: one answers 500 for over an hour, one 410,
// one accepts and never answers; a fourth is healthy. The delivery worker runs on its own timer of the
// injected clock, as in the cloud process, and the test moves that clock.

const EP = {
  ok: "fa17fa17-0000-4000-8000-000000000001",
  flaky: "fa17fa17-0000-4000-8000-000000000002",
  gone: "fa17fa17-0000-4000-8000-000000000003",
  hang: "fa17fa17-0000-4000-8000-000000000004",
} as const;
type Name = keyof typeof EP;
const L1 = derivedId(OP_A, "location", "L1");
const HOUR = 3_600_000;
/** The worker's tick; a value no other timer of the harness uses, so the clock can tell the worker re-armed. */
const EVERY_MS = 250;
/** Events recorded while the first hung attempt waits out its timeout, one a second; `n` 0 … 8. */
const EVENTS = 9;
const ns = Array.from({ length: EVENTS }, (_, n) => n);

/** The fake clock, counting how often the worker armed its next tick (it does so once a pass has ended). */
class WatchedClock extends FakeClock implements Clock {
  passes = 0;
  override setTimer(ms: number, fn: () => void): TimerHandle {
    if (ms === EVERY_MS) this.passes++;
    return super.setTimer(ms, fn);
  }
}

const idOf = (r: ReceivedWebhook) => String(r.headers["webhook-id"]);
const nOf = (r: ReceivedWebhook) =>
  (JSON.parse(r.body) as { data: { events: { details: { n: number } }[] } }).data.events[0]?.details.n;

describe("webhook receivers that misbehave", () => {
  const clock = new WatchedClock();
  let h: CloudHarness;
  let worker: WebhookDelivery;
  const rx = {} as Record<Name, WebhookReceiver>;
  let t0 = 0;
  /** When each event was recorded (clock ms), by its `n`. */
  const recordedAt: number[] = [];

  beforeAll(async () => {
    h = await startCloudHarness({ clock });
    for (const name of Object.keys(EP) as Name[])
      rx[name] = await new WebhookReceiver(() => clock.now()).start();
    t0 = clock.now().getTime();
    rx.flaky.answer = (r) => (r.receivedAt.getTime() < t0 + HOUR ? 500 : 200);
    rx.gone.answer = () => 410;
    rx.hang.answer = () => "hang";
    const secret = `whsec_${randomBytes(32).toString("base64")}`;
    const webhooks = (Object.keys(EP) as Name[]).map((name) => ({
      id: EP[name],
      url: rx[name].url,
      secret,
      delivery: "direct" as const,
      allow_private: true,
    }));
    const manifest = { version: 1, operators: [{ id: OP_A, name: "Operator A", webhooks }] };
    await applyManifest(h.db, SiteManifest.parse(manifest), clock);
    const log = pino({ level: process.env.TEST_LOG_LEVEL ?? "silent" });
    worker = startWebhookDelivery({ db: h.db, clock, log, everyMs: EVERY_MS });
  });
  afterAll(async () => {
    await worker?.stop();
    for (const r of Object.values(rx)) await r.stop();
    await h?.close();
  });

  const logOf = (name: Name) => webhookLog(h.db, { endpointId: EP[name], limit: 100 });

  /**
   * Moves the clock by `ms` (one pass of the worker runs at the end) and waits for that pass, and for every
   * attempt it started at the answering receivers, to be settled in the store; the hung one is left hanging.
   * A drain may start just after its pass has re-armed: `expected` names receipts to wait for as well.
   */
  async function advance(ms: number, expected: () => void = () => undefined) {
    const passes = clock.passes;
    clock.advance(ms);
    await eventually(
      async () => {
        expect(clock.passes).toBeGreaterThan(passes);
        expected();
        for (const name of ["ok", "flaky", "gone"] as const) {
          const messages = await logOf(name);
          expect(messages.reduce((k, m) => k + m.log.length, 0)).toBe(rx[name].received.length);
          for (const m of messages) expect(m.attempts).toBe(m.log.length); // none claimed and unsettled
        }
      },
      20_000,
      10,
    );
  }

  async function event(n: number) {
    recordedAt[n] = clock.now().getTime();
    await recordSiteEvent(h.db, {
      operatorId: OP_A,
      type: "alarm",
      locationId: L1,
      data: { n },
      at: clock.now(),
    });
  }

  it("a receiver that hangs starves nobody: the others get theirs within a pass or two, retries on time", async () => {
    await event(0);
    // The first pass tries each endpoint once; nothing more is recorded until all four have been tried.
    await advance(EVERY_MS, () => {
      for (const r of Object.values(rx)) expect(r.received).toHaveLength(1);
    });

    // While the hung attempt waits out its 10 s, the healthy endpoint gets each event at the next pass and
    // the failing one is retried on time.
    for (let n = 1; n < EVENTS; n++) {
      await event(n);
      await advance(1_000);
    }
    await advance(1_000); // one more pass, for the last event if a pass left it to the next
    await eventually(() => expect(rx.ok.delivered.map(nOf)).toEqual(ns));
    expect(clock.now().getTime() - t0).toBeLessThan(WEBHOOK_TIMEOUT_MS);
    expect(rx.hang.received.map((r) => r.status)).toEqual([0]);
    expect((await logOf("hang")).flatMap((m) => m.log)).toEqual([]);
    expect(rx.ok.delivered.map(nOf)).toEqual(ns);
    // At the next pass, or the one after when that pass found the endpoint's previous drain still
    // committing: either way long before the hung attempt gives up.
    for (const [n, r] of rx.ok.delivered.entries())
      expect(r.receivedAt.getTime() - (recordedAt[n] ?? 0)).toBeLessThanOrEqual(n === 0 ? EVERY_MS : 2_000);
    // The failing receiver's first retry fell within the hang, 5 s after its first attempt.
    const [a1, a2] = rx.flaky.received.map((r) => r.receivedAt.getTime() - t0);
    expect(a1).toBe(EVERY_MS);
    expect((a2 ?? 0) - EVERY_MS - 5_000).toBeGreaterThanOrEqual(0);
    expect((a2 ?? 0) - EVERY_MS - 5_000).toBeLessThanOrEqual(1_000);
  });

  it("retries a receiver failing for over an hour on schedule, under one id, then sends the rest in order", async () => {
    // The failing receiver's head, attempt after attempt, each when it falls due, until it answers 200;
    // when each attempt was due, by the number of attempts before it.
    const due = new Map<number, number>();
    for (let i = 0; i < 40; i++) {
      const head = await eventually(async () => {
        const m = (await logOf("flaky")).find((x) => x.status === "pending" && x.log.length > 0);
        if (m && m.attempts !== m.log.length) throw new Error("an attempt is under way");
        return m;
      });
      if (!head?.nextAttemptAt) break;
      due.set(head.log.length, Date.parse(head.nextAttemptAt));
      await advance(Math.max(EVERY_MS, Date.parse(head.nextAttemptAt) - clock.now().getTime()));
    }
    await eventually(() => expect(rx.flaky.delivered.map(nOf)).toEqual(ns), 20_000);

    const failed = rx.flaky.received.filter((r) => r.status === 500);
    const first = rx.flaky.delivered[0] as ReceivedWebhook;
    const tries = [...failed, first].map((r) => r.receivedAt.getTime());
    expect(failed).toHaveLength(10);
    // 5 s, 10 s, 20 s … doubling after each failure (the third attempt on), to the first attempt after the
    // receiver came back (over 1 h). A retry is due that long after the failed attempt ended and is sent at
    // the first pass once due; the test moves the clock by a pass when the worker is between steps, so
    // either may fall a pass (250 ms) late.
    for (let k = 2; k < tries.length; k++) {
      const at = due.get(k) ?? Number.NaN;
      expect(at - (tries[k - 1] ?? 0) - retryDelayMs(k)).toBeGreaterThanOrEqual(0);
      expect(at - (tries[k - 1] ?? 0) - retryDelayMs(k)).toBeLessThanOrEqual(EVERY_MS);
      expect((tries[k] ?? 0) - at).toBeGreaterThanOrEqual(0);
      expect((tries[k] ?? 0) - at).toBeLessThanOrEqual(EVERY_MS);
    }
    expect(first.receivedAt.getTime() - t0).toBeGreaterThanOrEqual(HOUR);
    // One id on every attempt; then the rest of the queue, in order, each once.
    expect(new Set([...failed, first].map(idOf))).toEqual(new Set([idOf(first)]));
    expect(new Set(rx.flaky.delivered.map(idOf)).size).toBe(EVENTS);
    const flakyLog = await logOf("flaky");
    expect(flakyLog.find((m) => m.id === idOf(first))?.log.map((a) => a.statusCode)).toEqual([
      ...failed.map(() => 500),
      200,
    ]);
  });

  it("disables the endpoint answering 410 and tells the operator; gives up each hung attempt", async () => {
    // 410: tried once, disabled, nothing queued for it since, and the operator told in the audit log.
    expect(rx.gone.received).toHaveLength(1);
    const endpoints = await listWebhookEndpoints(h.db);
    const gone = endpoints.find((e) => e.id === EP.gone);
    expect(gone).toMatchObject({ enabled: false, queue: { pending: 1, delivered: 0, dead: 0 } });
    expect(gone?.disabledReason).toMatch(/^answered 410 Gone at /);
    const told = await listAudit(h.db, OP_A, { subject: { type: "webhook_endpoint", id: EP.gone } });
    expect(told.data).toMatchObject([
      {
        action: "webhook.disable",
        actor: { kind: "system" },
        reason: expect.stringMatching(/410 Gone/),
      },
    ]);

    // The hung receiver: every attempt the same message, each given up as unanswered, nothing behind it sent.
    expect(rx.hang.received.length).toBeGreaterThan(3);
    expect(new Set(rx.hang.received.map(idOf)).size).toBe(1);
    const hung = (await logOf("hang")).flatMap((m) => m.log);
    expect(hung.length).toBeGreaterThanOrEqual(rx.hang.received.length - 1);
    expect(new Set(hung.map((a) => a.error))).toEqual(new Set(["no answer in time"]));
    expect(endpoints.find((e) => e.id === EP.hang)?.queue).toEqual({
      pending: EVENTS,
      delivered: 0,
      dead: 0,
    });
    expect(endpoints.find((e) => e.id === EP.ok)?.queue).toEqual({ pending: 0, delivered: EVENTS, dead: 0 });
  });
});
