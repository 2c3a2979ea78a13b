import { randomBytes } from "node:crypto";
import pino from "pino";
import { Webhook } from "standardwebhooks";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { listAudit } from "../../cloud/audit/audit-log.ts";
import { applyManifest, derivedId } from "../../cloud/manifest/apply-manifest.ts";
import { findProblems } from "../../cloud/manifest/manifest-problems.ts";
import { SiteManifest } from "../../cloud/manifest/manifest-schema.ts";
import { NOT_DECLARED } from "../../cloud/webhooks/declare-webhooks.ts";
import {
  bufferedEvents,
  listWebhookEndpoints,
  replayWebhookMessage,
  webhookLog,
} from "../../cloud/webhooks/operator-commands.ts";
import { DEAD_AFTER_MS } from "../../cloud/webhooks/retry-schedule.ts";
import { recordSiteEvent, type SiteEvent } from "../../cloud/webhooks/site-events.ts";
import { startWebhookDelivery, type WebhookDelivery } from "../../cloud/webhooks/webhook-delivery.ts";
import { webhookDeliveryRepository } from "../../cloud/webhooks/webhook-delivery-repository.ts";
import type { ManifestWebhook } from "../../cloud/webhooks/webhook-manifest.ts";
import { DELIVERY_ACTOR } from "../../cloud/webhooks/webhook-queue.ts";
import { WEBHOOK_TYPES, type WebhookPayload, webhookPayloadSchema } from "../../shared/api/webhook.ts";
import { CliExit, EXIT } from "../../shared/cli/exit-codes.ts";
import { type CloudHarness, startCloudHarness } from "../support/cloud-harness.ts";
import { eventually } from "../support/eventually.ts";
import { OP_A, OP_B } from "../support/fixture-site.ts";
import { type ReceivedWebhook, WebhookReceiver } from "../support/webhook-receiver.ts";

const EP_1 = "e1e1e1e1-0000-4000-8000-000000000001";
const EP_2 = "e1e1e1e1-0000-4000-8000-000000000002";
const L1 = derivedId(OP_A, "location", "L1");
const DEVICE = derivedId(L1, "device", "1");
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

const newSecret = () => `whsec_${randomBytes(32).toString("base64")}`;
const SECRET = newSecret();

type WebhookInput = Partial<Omit<ManifestWebhook, "id" | "url">> & { id: string; url: string };

/** Checks a received webhook with the stock Standard Webhooks verifier, at the moment it arrived. */
function verify(r: ReceivedWebhook, secret: string): unknown {
  const headers = {
    "webhook-id": String(r.headers["webhook-id"]),
    "webhook-timestamp": String(r.headers["webhook-timestamp"]),
    "webhook-signature": String(r.headers["webhook-signature"]),
  };
  vi.setSystemTime(r.receivedAt);
  try {
    return new Webhook(secret).verify(r.body, headers);
  } finally {
    vi.useRealTimers();
  }
}

const bodyOf = (r: ReceivedWebhook) => JSON.parse(r.body) as WebhookPayload;

describe("outbound webhooks", () => {
  let h: CloudHarness;
  let worker: WebhookDelivery;
  let receiver: WebhookReceiver;
  let receiver2: WebhookReceiver;
  const log = pino({ level: process.env.TEST_LOG_LEVEL ?? "silent" });

  beforeEach(async () => {
    h = await startCloudHarness();
    receiver = await new WebhookReceiver(() => h.clock.now()).start();
    receiver2 = await new WebhookReceiver(() => h.clock.now()).start();
    worker = startWebhookDelivery({ db: h.db, clock: h.clock, log });
  });
  afterEach(async () => {
    await worker.stop();
    await receiver.stop();
    await receiver2.stop();
    await h.close();
  });

  /** Applies operator A's `webhooks` (test receivers are on loopback: allow_private unless said). */
  function declare(webhooks: WebhookInput[], env: Record<string, string> = {}, op = OP_A) {
    return applyManifest(
      h.db,
      SiteManifest.parse({
        version: 1,
        operators: [
          {
            id: op,
            name: op === OP_A ? "Operator A" : "Operator B",
            webhooks: webhooks.map((w) => ({ allow_private: true, secret: SECRET, ...w })),
          },
        ],
      }),
      h.clock,
      env,
    );
  }

  function event(type: SiteEvent["type"], data: object = {}, o: Partial<SiteEvent> = {}): Promise<void> {
    return recordSiteEvent(h.db, {
      operatorId: OP_A,
      type,
      locationId: L1,
      deviceId: DEVICE,
      data,
      at: h.clock.now(),
      ...o,
    });
  }

  /** Every message, oldest queueing first, as the operator CLI's webhook-log shows them. */
  const messages = async () => (await webhookLog(h.db, { limit: 1000 })).reverse();

  /** Moves the clock in steps, letting the worker tick at each. */
  async function run(totalMs: number, stepMs: number) {
    for (let t = 0; t < totalMs; t += stepMs) {
      h.clock.advance(stepMs);
      await worker.tick();
    }
  }

  it("delivers a direct event within a tick of the injected clock, signed and in the documented shape", async () => {
    await declare([{ id: EP_1, url: receiver.url, delivery: "direct" }]);
    await event("alarm", { alarm: "tamper" });
    h.clock.advance(500); // the worker's own timer
    await eventually(() => expect(receiver.delivered).toHaveLength(1));
    await worker.tick();
    const [r] = receiver.received as [ReceivedWebhook];
    expect(r.path).toBe("/hooks");
    expect(r.headers["content-type"]).toBe("application/json");
    const body = verify(r, SECRET) as WebhookPayload;
    expect(webhookPayloadSchema("alarm").parse(body)).toEqual(body);
    expect(body).toEqual({
      id: r.headers["webhook-id"],
      type: "alarm",
      created_at: "2026-01-15T10:00:00.000Z",
      data: {
        events: [
          {
            id: expect.stringMatching(/^evt_[0-9a-f]{32}$/),
            type: "alarm",
            occurred_at: "2026-01-15T10:00:00.000Z",
            location_id: L1,
            device_id: DEVICE,
            details: { alarm: "tamper" },
          },
        ],
      },
    });
    expect(body.id).toMatch(/^msg_[0-9a-f]{32}$/);
    const [m] = await messages();
    expect(m).toMatchObject({ id: body.id, status: "delivered", attempts: 1, events: 1 });
    const [entry] = await webhookLog(h.db, { limit: 10 });
    expect(entry?.log).toEqual([
      { attempt: 1, at: "2026-01-15T10:00:00.500Z", statusCode: 200, error: null, durationMs: 0 },
    ]);
  });

  it("sends only the types an endpoint subscribed to, and nothing for another operator's events", async () => {
    await declare([{ id: EP_1, url: receiver.url, delivery: "direct", types: ["status"] }]);
    await event("alarm");
    await event("connection", { online: false });
    await event("status", { reason: "door open 5 minutes" });
    await event("status", {}, { operatorId: OP_B });
    await worker.tick();
    expect(receiver.delivered.map((r) => bodyOf(r).type)).toEqual(["status"]);
  });

  it("aggregates each type in its own window: alarms for a minute, connection and status for five", async () => {
    await declare([{ id: EP_1, url: receiver.url }]);
    const t0 = h.clock.now().getTime();
    await event("alarm", { n: 1 });
    await event("status", { n: 1 });
    await event("connection", { n: 1 });
    h.clock.advance(10_000);
    await event("alarm", { n: 2 });
    await event("connection", { n: 2 });
    h.clock.advance(40_000);
    await event("alarm", { n: 3 });
    await run(9_000, 1_000); // t0 + 59 s
    expect(receiver.received).toHaveLength(0);
    await run(1_000, 1_000); // t0 + 60 s: the alarm window closes
    expect(receiver.delivered.map((r) => bodyOf(r).type)).toEqual(["alarm"]);
    const alarms = bodyOf(receiver.delivered[0] as ReceivedWebhook);
    expect(alarms.data.events.map((e) => e.details)).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
    expect(alarms.created_at).toBe(new Date(t0 + 60_000).toISOString());

    // A later alarm opens a new window of its own.
    h.clock.advance(10_000); // t0 + 70 s
    await event("alarm", { n: 4 });
    await run(59_000, 1_000);
    expect(receiver.delivered).toHaveLength(1);
    await run(1_000, 1_000); // t0 + 130 s
    expect(receiver.delivered.map((r) => bodyOf(r).data.events.length)).toEqual([3, 1]);

    await run(300_000 - 130_000 - 1_000, 1_000); // t0 + 299 s
    expect(receiver.delivered).toHaveLength(2);
    await run(1_000, 1_000); // t0 + 300 s: connection and status
    const rest = receiver.delivered.slice(2).map(bodyOf);
    expect(rest.map((b) => [b.type, b.data.events.length]).sort()).toEqual([
      ["connection", 2],
      ["status", 1],
    ]);
    for (const r of receiver.delivered) expect(() => verify(r, SECRET)).not.toThrow();
    expect(await bufferedEvents(h.db)).toEqual([]);
  });

  it("signs with both secrets during a rotation, each verifying with the standardwebhooks library", async () => {
    const previous = newSecret();
    const current = newSecret();
    await declare(
      [
        {
          id: EP_1,
          url: receiver.url,
          delivery: "direct",
          secret: undefined,
          secret_env: "HOOK_SECRET",
          previous_secret: previous,
        },
      ],
      { HOOK_SECRET: current },
    );
    await event("alarm");
    await worker.tick();
    const [r] = receiver.delivered as [ReceivedWebhook];
    expect(String(r.headers["webhook-signature"]).split(" ")).toHaveLength(2);
    expect(verify(r, current)).toEqual(bodyOf(r));
    expect(verify(r, previous)).toEqual(bodyOf(r));
    expect(() => verify(r, newSecret())).toThrow();
    expect(() => verify({ ...r, body: r.body.replace("alarm", "alarn") }, current)).toThrow();
    expect(() =>
      verify({ ...r, receivedAt: new Date(r.receivedAt.getTime() + 6 * MINUTE) }, current),
    ).toThrow();

    // The rotation ends: the previous secret no longer verifies new messages.
    await declare([{ id: EP_1, url: receiver.url, delivery: "direct" }]);
    await event("alarm");
    await worker.tick();
    const second = receiver.delivered[1] as ReceivedWebhook;
    expect(verify(second, SECRET)).toEqual(bodyOf(second));
    expect(() => verify(second, current)).toThrow();
  });

  it("gives a receiver that failed for an hour every message afterwards, once per id, in order", async () => {
    await declare([{ id: EP_1, url: receiver.url, delivery: "direct" }]);
    const recovery = h.clock.now().getTime() + HOUR;
    receiver.answer = (r) => (r.receivedAt.getTime() < recovery ? 500 : 200);
    for (let i = 0; i < 6; i++) {
      await event("connection", { n: i });
      await run(10 * MINUTE, MINUTE);
    }
    await event("connection", { n: 6 });
    const ids = (await messages()).map((m) => m.id);
    expect(ids).toHaveLength(7);
    expect(receiver.delivered).toHaveLength(0);
    // The first message's retries reached an hour apart; the queue waits behind it.
    await run(2 * HOUR, MINUTE);

    const failed = receiver.received.filter((r) => r.status === 500);
    expect(failed.length).toBeGreaterThan(5);
    // Only the head was tried while the receiver failed, always under the same id.
    expect(new Set(failed.map((r) => r.headers["webhook-id"]))).toEqual(new Set([ids[0]]));
    const delivered = receiver.delivered.map((r) => String(r.headers["webhook-id"]));
    expect(delivered).toEqual(ids);
    expect(receiver.delivered.map((r) => bodyOf(r).data.events[0]?.details)).toEqual(
      [0, 1, 2, 3, 4, 5, 6].map((n) => ({ n })),
    );
    for (const r of receiver.delivered) expect(() => verify(r, SECRET)).not.toThrow();
    expect((await messages()).every((m) => m.status === "delivered")).toBe(true);
    const head = (await webhookLog(h.db, { limit: 10 })).find((m) => m.id === ids[0]);
    expect(head?.log.map((a) => a.statusCode)).toEqual([...failed.map(() => 500), 200]);
  });

  it("gives a message up as dead after a day, then sends the ones behind it", async () => {
    await declare([{ id: EP_1, url: receiver.url, delivery: "direct" }]);
    receiver.answer = () => 503;
    const start = h.clock.now().getTime();
    await event("alarm", { n: 1 });
    await worker.tick();
    h.clock.advance(MINUTE);
    await event("alarm", { n: 2 });
    for (;;) {
      const [head] = await messages();
      if (head?.status !== "pending" || head.nextAttemptAt === null) break;
      h.clock.advance(Math.max(0, Date.parse(head.nextAttemptAt) - h.clock.now().getTime()));
      await worker.tick();
    }
    const [first, second] = await messages();
    expect(first).toMatchObject({ status: "dead", deadAt: new Date(start + DEAD_AFTER_MS).toISOString() });
    expect(first?.attempts).toBeGreaterThan(25);
    expect(first?.lastError).toBe("HTTP 503");
    // The second message was queued a minute later; it now heads the queue and has been tried.
    expect(second).toMatchObject({ status: "pending" });
    expect(second?.attempts).toBeGreaterThanOrEqual(1);
    const log = await webhookLog(h.db, { endpointId: EP_1, limit: 5 });
    expect(log.find((m) => m.id === first?.id)?.log).toHaveLength(first?.attempts ?? -1);
  });

  it("replays a delivered or dead message from the operator CLI under the same id", async () => {
    await declare([{ id: EP_1, url: receiver.url, delivery: "direct" }]);
    await event("alarm", { n: 1 });
    await worker.tick();
    const [m] = await messages();
    if (!m) throw new Error("no message");
    await expect(replayWebhookMessage(h.db, "msg_unknown", h.clock.now())).rejects.toMatchObject({
      code: EXIT.notFound,
    });
    h.clock.advance(MINUTE);
    expect(await replayWebhookMessage(h.db, m.id, h.clock.now())).toEqual({
      id: m.id,
      endpointId: EP_1,
      from: "delivered",
      endpointEnabled: true,
    });
    const replayed = (await messages())[0];
    expect(replayed).toMatchObject({ status: "pending", attempts: 0, deliveredAt: null });
    const again = replayWebhookMessage(h.db, m.id, h.clock.now());
    await expect(again).rejects.toBeInstanceOf(CliExit);
    await expect(again).rejects.toMatchObject({ code: EXIT.checkFailed });
    await worker.tick();
    const [first, second] = receiver.delivered as [ReceivedWebhook, ReceivedWebhook];
    expect(second.headers["webhook-id"]).toBe(m.id);
    expect(second.body).toBe(first.body);
    expect(Number(second.headers["webhook-timestamp"])).toBe(Number(first.headers["webhook-timestamp"]) + 60);
    expect(() => verify(second, SECRET)).not.toThrow();
    expect((await messages())[0]).toMatchObject({ status: "delivered", attempts: 1 });
  });

  it("keeps settled messages and their attempts for 30 days, pending ones for as long as they wait", async () => {
    await declare([{ id: EP_1, url: receiver.url, delivery: "direct" }]);
    await event("alarm", { n: 1 });
    await worker.tick();
    // The receiver goes away (410): the next message waits, pending, for the endpoint to be declared again.
    receiver.answer = () => 410;
    await event("alarm", { n: 2 });
    await worker.tick();
    const [delivered, waiting] = await messages();
    await run(30 * 24 * HOUR, 12 * HOUR);
    expect((await messages()).map((m) => m.id)).toEqual([delivered?.id, waiting?.id]);
    await run(2 * HOUR, HOUR);
    expect((await messages()).map((m) => [m.id, m.status])).toEqual([[waiting?.id, "pending"]]);
    // The delivered message's attempt went with it.
    const ids = [delivered?.id, waiting?.id].filter((id) => id !== undefined);
    const attempts = await webhookDeliveryRepository(h.db).attemptsOf(ids);
    expect(attempts.map((a) => [a.messageId, a.statusCode])).toEqual([[waiting?.id, 410]]);
  });

  it("refuses loopback and private addresses without allow_private: in the manifest and at delivery (S26)", async () => {
    const { problems } = findProblems({
      version: 1,
      operators: [
        {
          id: OP_A,
          name: "Operator A",
          webhooks: [
            { id: EP_1, url: receiver.url, secret: SECRET },
            { id: EP_2, url: "https://169.254.169.254/latest", secret: SECRET },
          ],
        },
      ],
    });
    expect(problems.map((p) => [p.path.join("."), p.message])).toEqual([
      ["operators.0.webhooks.0.url", "must be https unless allow_private is true"],
      [
        "operators.0.webhooks.0.url",
        "127.0.0.1 is not a public address (set allow_private: true to allow it)",
      ],
      [
        "operators.0.webhooks.1.url",
        "169.254.169.254 is not a public address (set allow_private: true to allow it)",
      ],
    ]);

    // A name that resolves to loopback when the message is sent is refused then; nothing reaches it.
    await worker.stop();
    worker = startWebhookDelivery({
      db: h.db,
      clock: h.clock,
      log,
      resolve: (_host, cb) => cb(null, [{ address: "127.0.0.1", family: 4 }]),
    });
    await declare([
      {
        id: EP_1,
        url: `https://hooks.example.test:${receiver.port}/hooks`,
        delivery: "direct",
        allow_private: false,
      },
    ]);
    await event("alarm");
    await worker.tick();
    expect(receiver.received).toEqual([]);
    const [m] = await messages();
    expect(m).toMatchObject({ status: "pending", attempts: 1 });
    expect(m?.lastError).toBe(
      "address refused: hooks.example.test resolves to 127.0.0.1, which is not a public address",
    );
  });

  it("keeps each endpoint's order: nothing behind a failing message is sent, other endpoints go on", async () => {
    await declare([
      { id: EP_1, url: receiver.url, delivery: "direct" },
      { id: EP_2, url: receiver2.url, delivery: "direct" },
    ]);
    receiver.answer = () => 500;
    for (const n of [1, 2, 3]) await event("status", { n });
    await worker.tick();
    expect(receiver.received).toHaveLength(1);
    expect(receiver2.delivered.map((r) => bodyOf(r).data.events[0]?.details)).toEqual([
      { n: 1 },
      { n: 2 },
      { n: 3 },
    ]);
    await run(4_000, 1_000);
    expect(receiver.received).toHaveLength(1); // the retry waits 5 s
    receiver.answer = () => 200;
    await run(1_000, 1_000);
    expect(receiver.delivered.map((r) => bodyOf(r).data.events[0]?.details)).toEqual([
      { n: 1 },
      { n: 2 },
      { n: 3 },
    ]);
    const [ep1, ep2] = await listWebhookEndpoints(h.db);
    expect(ep1?.queue).toEqual({ pending: 0, delivered: 3, dead: 0 });
    expect(ep2?.queue).toEqual({ pending: 0, delivered: 3, dead: 0 });
  });

  it("lets two replicas share the queue: each window is flushed once and each message sent once", async () => {
    const replica = startWebhookDelivery({ db: h.db, clock: h.clock, log });
    try {
      await declare([
        { id: EP_1, url: receiver.url, delivery: "direct" },
        { id: EP_2, url: receiver2.url },
      ]);
      for (const n of [1, 2, 3, 4]) await event("alarm", { n });
      h.clock.advance(MINUTE);
      await Promise.all([worker.tick(), replica.tick(), worker.tick(), replica.tick()]);
      const ids = (r: WebhookReceiver) => r.delivered.map((x) => String(x.headers["webhook-id"]));
      expect(receiver.delivered.map((r) => bodyOf(r).data.events[0]?.details)).toEqual(
        [1, 2, 3, 4].map((n) => ({ n })),
      );
      expect(new Set(ids(receiver)).size).toBe(4);
      expect(receiver2.delivered).toHaveLength(1);
      expect(bodyOf(receiver2.delivered[0] as ReceivedWebhook).data.events).toHaveLength(4);
      expect(await messages()).toHaveLength(5);
    } finally {
      await replica.stop();
    }
  });

  it("gives up an attempt the receiver never answers after 10 s of the clock; other endpoints go on (F12)", async () => {
    await declare([
      { id: EP_1, url: receiver.url, delivery: "direct" },
      { id: EP_2, url: receiver2.url, delivery: "direct" },
    ]);
    receiver.answer = () => "hang";
    await event("alarm");
    const ticking = worker.tick();
    await eventually(() => expect(receiver.received).toHaveLength(1));
    await eventually(() => expect(receiver2.delivered).toHaveLength(1));
    h.clock.advance(9_999);
    expect((await messages()).find((m) => m.endpointId === EP_1)?.lastError).toBeNull();
    h.clock.advance(1);
    await ticking;
    const hung = (await messages()).find((m) => m.endpointId === EP_1);
    expect(hung).toMatchObject({ status: "pending", attempts: 1, lastError: "no answer in time" });
    receiver.answer = () => 200;
    await run(5_000, 1_000);
    expect(receiver.delivered.map((r) => r.headers["webhook-id"])).toEqual([hung?.id]);
  });

  it("disables an endpoint that answers 410 Gone and keeps its messages until it is declared again", async () => {
    await declare([{ id: EP_1, url: receiver.url, delivery: "direct" }]);
    receiver.answer = () => 410;
    await event("alarm", { n: 1 });
    await worker.tick();
    await event("alarm", { n: 2 }); // no new message for a disabled endpoint
    await run(10_000, 1_000);
    expect(receiver.received).toHaveLength(1);
    const [ep] = await listWebhookEndpoints(h.db);
    expect(ep).toMatchObject({ enabled: false, queue: { pending: 1, delivered: 0, dead: 0 } });
    expect(ep?.disabledReason).toMatch(/^answered 410 Gone at /);
    // The operator is told in the audit log, once, by the delivery worker.
    const told = await listAudit(h.db, OP_A, { subject: { type: "webhook_endpoint", id: EP_1 } });
    expect(told.data).toMatchObject([
      { action: "webhook.disable", actor: DELIVERY_ACTOR, changes: { enabled: { from: true } } },
    ]);
    receiver.answer = () => 200;
    await declare([{ id: EP_1, url: receiver.url, delivery: "direct" }]);
    await worker.tick();
    expect(receiver.delivered.map((r) => bodyOf(r).data.events[0]?.details)).toEqual([{ n: 1 }]);
  });

  it("records an event inside the caller's transaction: rolled back with it, kept when it commits", async () => {
    await declare([
      { id: EP_1, url: receiver.url, delivery: "direct" },
      { id: EP_2, url: receiver2.url },
    ]);
    const rollback = new Error("rollback");
    await expect(
      h.db.transaction().execute(async (trx) => {
        await recordSiteEvent(trx, { operatorId: OP_A, type: "alarm", data: {}, at: h.clock.now() });
        throw rollback;
      }),
    ).rejects.toBe(rollback);
    expect(await messages()).toEqual([]);
    expect(await bufferedEvents(h.db)).toEqual([]);
    await h.db.transaction().execute(async (trx) => {
      await recordSiteEvent(trx, { operatorId: OP_A, type: "alarm", data: {}, at: h.clock.now() });
    });
    expect(await messages()).toHaveLength(1);
    expect(await bufferedEvents(h.db)).toEqual([{ operatorId: OP_A, type: "alarm", n: 1 }]);
  });

  it("declares endpoints idempotently; one left out is disabled, another operator's id is refused", async () => {
    const hooks = [
      { id: EP_1, url: receiver.url },
      { id: EP_2, url: receiver2.url, types: ["alarm" as const] },
    ];
    expect(await declare(hooks)).toEqual({ created: 2, updated: 0 });
    expect(await declare(hooks)).toEqual({ created: 0, updated: 0 });
    expect(await declare([hooks[0] as WebhookInput])).toEqual({ created: 0, updated: 1 });
    const [one, two] = await listWebhookEndpoints(h.db);
    expect(one).toMatchObject({ id: EP_1, enabled: true, delivery: "aggregated", types: [...WEBHOOK_TYPES] });
    expect(two).toMatchObject({ id: EP_2, enabled: false, disabledReason: NOT_DECLARED, types: ["alarm"] });
    await expect(declare([{ id: EP_1, url: receiver.url }], {}, OP_B)).rejects.toThrow(
      /belongs to an endpoint of another operator/,
    );
    await expect(
      declare([{ id: EP_2, url: receiver.url, secret: undefined, secret_env: "UNSET_SECRET" }]),
    ).rejects.toThrow(/UNSET_SECRET is not set/);
    const { problems } = findProblems(
      {
        version: 1,
        operators: [
          {
            id: OP_A,
            name: "Operator A",
            webhooks: [
              { id: EP_1, url: "https://hooks.example.com/", secret_env: "HOOK", delivey: "direct" },
            ],
          },
        ],
      },
      {},
    );
    expect(problems.map((p) => [p.path.join("."), p.message])).toEqual([
      ["operators.0.webhooks.0.delivey", 'unknown key (did you mean "delivery"?)'],
      [
        "operators.0.webhooks.0.secret_env",
        "environment variable HOOK is not set (apply reads the secret from it)",
      ],
    ]);
  });

  it("documents each type's payload in the OpenAPI document's webhooks section", async () => {
    const res = await h.app.inject({ method: "GET", url: "/openapi.json" });
    const doc = res.json() as {
      webhooks: Record<
        string,
        {
          post: {
            parameters: { name: string; in: string }[];
            requestBody: {
              content: { "application/json": { schema: { properties: Record<string, unknown> } } };
            };
          };
        }
      >;
    };
    expect(Object.keys(doc.webhooks).sort()).toEqual([...WEBHOOK_TYPES].sort());
    for (const type of WEBHOOK_TYPES) {
      const op = doc.webhooks[type]?.post;
      expect(op?.parameters.map((p) => `${p.in}:${p.name}`)).toEqual([
        "header:webhook-id",
        "header:webhook-timestamp",
        "header:webhook-signature",
      ]);
      const schema = op?.requestBody.content["application/json"].schema;
      expect(Object.keys(schema?.properties ?? {}).sort()).toEqual(["created_at", "data", "id", "type"]);
      expect(schema?.properties.type).toMatchObject({ const: type });
    }
  });
});
