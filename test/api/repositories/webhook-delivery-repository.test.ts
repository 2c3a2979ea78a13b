import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { applyManifest } from "../../../cloud/manifest/apply-manifest.ts";
import { SiteManifest } from "../../../cloud/manifest/manifest-schema.ts";
import { webhookDeliveryRepository } from "../../../cloud/webhooks/webhook-delivery-repository.ts";
import { webhookEndpointRepository } from "../../../cloud/webhooks/webhook-endpoint-repository.ts";
import type { NewMessage } from "../../../cloud/webhooks/webhook-messages.ts";
import { webhookEvent, webhookPayload } from "../../../cloud/webhooks/webhook-payload.ts";
import type { WebhookType } from "../../../shared/api/webhook.ts";
import { FakeClock } from "../../support/fake-clock.ts";
import { OP_A, OP_B } from "../../support/fixture-site.ts";
import { openTestDb, type TestDb } from "../../support/test-db.ts";

const EP_1 = "e1e1e1e1-0000-4000-8000-000000000001";
const EP_2 = "e1e1e1e1-0000-4000-8000-000000000002";
const EP_B = "e1e1e1e1-0000-4000-8000-00000000000b";
const T0 = new Date("2026-01-15T10:00:00.000Z");
const at = (minutes: number) => new Date(T0.getTime() + minutes * 60_000);
const iso = (minutes: number) => at(minutes).toISOString();

const event = (id: string, type: WebhookType = "alarm", minutes = 0) =>
  webhookEvent({ operatorId: OP_A, type, data: { n: id }, at: at(minutes) }, id);

function message(id: string, endpointId: string, minutes: number, type: WebhookType = "alarm"): NewMessage {
  const events = [event(`evt_${id}`, type, minutes)];
  return {
    id,
    endpointId,
    operatorId: endpointId === EP_B ? OP_B : OP_A,
    type,
    payload: webhookPayload({ id, type, createdAt: at(minutes), events }),
    eventCount: events.length,
    at: iso(minutes),
  };
}

describe("webhook delivery repository", () => {
  let store: TestDb;
  let repo: ReturnType<typeof webhookDeliveryRepository>;

  beforeEach(async () => {
    store = await openTestDb();
    const operators = [OP_A, OP_B].map((id) => ({ id, name: id }));
    await applyManifest(store.db, SiteManifest.parse({ version: 1, operators }), new FakeClock(T0), {});
    const endpoints = webhookEndpointRepository(store.db);
    for (const [id, operatorId] of [
      [EP_1, OP_A],
      [EP_2, OP_A],
      [EP_B, OP_B],
    ] as const)
      await endpoints.insert({
        id,
        operatorId,
        url: `https://hooks.example/${id}`,
        secrets: ["whsec_a", "whsec_b"],
        types: ["alarm"],
        delivery: "direct",
        allowPrivate: id === EP_2,
        enabled: true,
        disabledReason: null,
        createdAt: iso(0),
        updatedAt: iso(0),
      });
    repo = webhookDeliveryRepository(store.db);
  });
  afterEach(() => store.drop());

  it("buffers events: groups by operator and type with the oldest time, counts, and hands out the oldest", async () => {
    await repo.bufferEvent(OP_A, event("evt_2", "alarm"), iso(2));
    await repo.bufferEvent(OP_A, event("evt_1", "alarm"), iso(1));
    await repo.bufferEvent(OP_A, event("evt_3", "status"), iso(3));
    await repo.bufferEvent(OP_B, event("evt_4", "alarm"), iso(4));
    const groups = await repo.bufferedGroups();
    expect(groups.sort((a, b) => a.firstAt.localeCompare(b.firstAt))).toEqual([
      { operatorId: OP_A, type: "alarm", firstAt: iso(1) },
      { operatorId: OP_A, type: "status", firstAt: iso(3) },
      { operatorId: OP_B, type: "alarm", firstAt: iso(4) },
    ]);
    expect(await repo.bufferedCounts()).toEqual([
      { operatorId: OP_A, type: "alarm", n: 2 },
      { operatorId: OP_A, type: "status", n: 1 },
      { operatorId: OP_B, type: "alarm", n: 1 },
    ]);
    const oldest = await repo.oldestBuffered(OP_A, "alarm", 1);
    expect(oldest).toEqual([{ id: "evt_1", event: event("evt_1", "alarm") }]);
    expect((await repo.oldestBuffered(OP_A, "alarm", 10)).map((b) => b.id)).toEqual(["evt_1", "evt_2"]);
    expect(await repo.oldestBuffered(OP_B, "status", 10)).toEqual([]);
  });

  it("unbuffers only what is still buffered, and says how many", async () => {
    await repo.bufferEvent(OP_A, event("evt_1"), iso(1));
    await repo.bufferEvent(OP_A, event("evt_2"), iso(2));
    expect(await repo.unbuffer(["evt_1", "evt_gone"])).toBe(1);
    expect(await repo.unbuffer(["evt_1"])).toBe(0);
    expect(await repo.unbuffer([])).toBe(0);
    expect(await repo.bufferedCounts()).toEqual([{ operatorId: OP_A, type: "alarm", n: 1 }]);
  });

  it("gives the due head of each enabled endpoint, oldest first, with what sending it needs", async () => {
    await repo.insertMessage(message("msg_2", EP_1, 2));
    await repo.insertMessage(message("msg_1", EP_1, 1));
    await repo.insertMessage(message("msg_3", EP_2, 3));
    await repo.insertMessage(message("msg_4", EP_B, 9));
    const heads = await repo.dueHeads(at(5), { limit: 10 });
    expect(heads.map((m) => m.id)).toEqual(["msg_1", "msg_3"]);
    expect(heads[1]).toEqual({
      id: "msg_3",
      endpointId: EP_2,
      url: `https://hooks.example/${EP_2}`,
      secrets: ["whsec_a", "whsec_b"],
      allowPrivate: true,
      payload: JSON.stringify(message("msg_3", EP_2, 3).payload),
      attempts: 0,
      nextAttemptAt: iso(3),
      queuedAt: iso(3),
    });
    expect((await repo.dueHeads(at(5), { limit: 1 })).map((m) => m.id)).toEqual(["msg_1"]);
    expect((await repo.dueHeads(at(5), { limit: 10, endpointId: EP_2 })).map((m) => m.id)).toEqual(["msg_3"]);
    expect((await repo.dueHeads(at(10), { limit: 10 })).map((m) => m.id)).toEqual([
      "msg_1",
      "msg_3",
      "msg_4",
    ]);
    await webhookEndpointRepository(store.db).disable(EP_1, "answered 410 Gone", iso(5));
    expect((await repo.dueHeads(at(5), { limit: 10 })).map((m) => m.id)).toEqual(["msg_3"]);
  });

  it("claims a due message once: a second claim of what was read loses; the lease hides it until it ends", async () => {
    await repo.insertMessage(message("msg_1", EP_1, 1));
    const [head] = await repo.dueHeads(at(1), { limit: 1 });
    if (!head) throw new Error("no head");
    expect(await repo.claim(head, at(2))).toBe(true);
    expect(await repo.claim(head, at(3))).toBe(false);
    expect(await repo.dueHeads(at(1), { limit: 1 })).toEqual([]);
    expect(await repo.dueHeads(at(2), { limit: 1 })).toMatchObject([
      { id: "msg_1", attempts: 1, nextAttemptAt: iso(2) },
    ]);
  });

  it("settles a claimed message only under its lease: delivered, retried, dead", async () => {
    await repo.insertMessage(message("msg_1", EP_1, 1));
    await repo.insertMessage(message("msg_2", EP_2, 1));
    await repo.insertMessage(message("msg_3", EP_B, 1));
    for (const m of await repo.dueHeads(at(1), { limit: 10 })) expect(await repo.claim(m, at(2))).toBe(true);
    expect(await repo.markDelivered("msg_1", at(3), iso(2))).toBe(false);
    expect(await repo.markDelivered("msg_1", at(2), iso(2))).toBe(true);
    expect(await repo.markDelivered("msg_1", at(2), iso(2))).toBe(false);
    expect(await repo.retryAt("msg_2", at(2), iso(7), "HTTP 500")).toBe(true);
    expect(await repo.markDead("msg_3", at(2), iso(2), "no answer in time")).toBe(true);
    const byId = Object.fromEntries((await repo.recent({ limit: 10 })).map((m) => [m.id, m]));
    expect(byId.msg_1).toMatchObject({
      status: "delivered",
      deliveredAt: iso(2),
      lastError: null,
      attempts: 1,
    });
    expect(byId.msg_2).toMatchObject({ status: "pending", nextAttemptAt: iso(7), lastError: "HTTP 500" });
    expect(byId.msg_3).toMatchObject({ status: "dead", deadAt: iso(2), lastError: "no answer in time" });
  });

  it("logs attempts and gives them back per message in the order they were made", async () => {
    await repo.insertMessage(message("msg_1", EP_1, 1));
    await repo.insertMessage(message("msg_2", EP_2, 1));
    const attempt = (messageId: string, n: number, minutes: number) => ({
      messageId,
      endpointId: messageId === "msg_1" ? EP_1 : EP_2,
      attempt: n,
      at: iso(minutes),
      statusCode: n === 2 ? 200 : null,
      error: n === 2 ? null : "no answer in time",
      durationMs: 10 * n,
    });
    await repo.logAttempt(attempt("msg_1", 2, 3));
    await repo.logAttempt(attempt("msg_1", 1, 2));
    await repo.logAttempt(attempt("msg_2", 1, 2));
    expect(await repo.attemptsOf(["msg_1"])).toEqual([attempt("msg_1", 1, 2), attempt("msg_1", 2, 3)]);
    expect(await repo.attemptsOf(["msg_1", "msg_2"])).toHaveLength(3);
    expect(await repo.attemptsOf(["msg_unknown"])).toEqual([]);
    expect(await repo.attemptsOf([])).toEqual([]);
  });

  it("counts messages per endpoint and status with the oldest queueing, and lists the newest first", async () => {
    await repo.insertMessage(message("msg_1", EP_1, 1));
    await repo.insertMessage(message("msg_2", EP_1, 2));
    await repo.insertMessage(message("msg_3", EP_2, 3, "status"));
    const [head] = await repo.dueHeads(at(1), { limit: 1, endpointId: EP_1 });
    if (!head) throw new Error("no head");
    await repo.claim(head, at(2));
    await repo.markDead("msg_1", at(2), iso(2), "HTTP 400");
    const counts = await repo.queueCounts();
    expect(counts.sort((a, b) => (a.endpointId + a.status).localeCompare(b.endpointId + b.status))).toEqual([
      { endpointId: EP_1, status: "dead", n: 1, oldestQueuedAt: iso(1) },
      { endpointId: EP_1, status: "pending", n: 1, oldestQueuedAt: iso(2) },
      { endpointId: EP_2, status: "pending", n: 1, oldestQueuedAt: iso(3) },
    ]);
    expect((await repo.recent({ limit: 10 })).map((m) => m.id)).toEqual(["msg_3", "msg_2", "msg_1"]);
    expect((await repo.recent({ limit: 2 })).map((m) => m.id)).toEqual(["msg_3", "msg_2"]);
    expect((await repo.recent({ limit: 10, endpointId: EP_1 })).map((m) => m.id)).toEqual(["msg_2", "msg_1"]);
    expect((await repo.recent({ limit: 10 }))[0]).toEqual({
      id: "msg_3",
      endpointId: EP_2,
      operatorId: OP_A,
      type: "status",
      eventCount: 1,
      status: "pending",
      attempts: 0,
      nextAttemptAt: iso(3),
      createdAt: iso(3),
      queuedAt: iso(3),
      deliveredAt: null,
      deadAt: null,
      lastError: null,
    });
  });

  it("finds a message with its endpoint's state and requeues it only from the status it was read in", async () => {
    await repo.insertMessage(message("msg_1", EP_1, 1));
    const [head] = await repo.dueHeads(at(1), { limit: 1 });
    if (!head) throw new Error("no head");
    await repo.claim(head, at(2));
    await repo.markDelivered("msg_1", at(2), iso(2));
    await webhookEndpointRepository(store.db).disable(EP_1, "not in the site manifest", iso(3));
    expect(await repo.findWithEndpoint("msg_1")).toMatchObject({
      message: { id: "msg_1", endpointId: EP_1, status: "delivered", deliveredAt: iso(2) },
      endpointEnabled: false,
    });
    expect(await repo.findWithEndpoint("msg_unknown")).toBeUndefined();
    expect(await repo.requeue("msg_1", "dead", iso(4))).toBe(false);
    expect(await repo.requeue("msg_1", "delivered", iso(4))).toBe(true);
    expect((await repo.findWithEndpoint("msg_1"))?.message).toMatchObject({
      status: "pending",
      attempts: 0,
      nextAttemptAt: iso(4),
      queuedAt: iso(4),
      createdAt: iso(1),
      deliveredAt: null,
      lastError: null,
    });
    expect(await repo.requeue("msg_1", "delivered", iso(5))).toBe(false);
  });

  it("deletes settled messages queued before the cutoff with their attempts; pending ones stay", async () => {
    await repo.insertMessage(message("msg_1", EP_1, 1));
    await repo.insertMessage(message("msg_2", EP_2, 1));
    await repo.insertMessage(message("msg_3", EP_B, 5));
    for (const m of await repo.dueHeads(at(5), { limit: 10 })) await repo.claim(m, at(6));
    await repo.markDelivered("msg_1", at(6), iso(6));
    await repo.markDead("msg_3", at(6), iso(6), "HTTP 400");
    for (const id of ["msg_1", "msg_3"])
      await repo.logAttempt({
        messageId: id,
        endpointId: EP_1,
        attempt: 1,
        at: iso(6),
        statusCode: 200,
        error: null,
        durationMs: 5,
      });
    expect(await repo.deleteSettledBefore(iso(2))).toBe(1);
    expect((await repo.recent({ limit: 10 })).map((m) => m.id).sort()).toEqual(["msg_2", "msg_3"]);
    expect(await repo.attemptsOf(["msg_1", "msg_3"])).toMatchObject([{ messageId: "msg_3" }]);
    expect(await repo.deleteSettledBefore(iso(2))).toBe(0);
  });
});
