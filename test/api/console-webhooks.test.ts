import { randomBytes } from "node:crypto";
import pino from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { applyManifest } from "../../cloud/manifest/apply-manifest.ts";
import { SiteManifest } from "../../cloud/manifest/manifest-schema.ts";
import { recordSiteEvent } from "../../cloud/webhooks/site-events.ts";
import { startWebhookDelivery, type WebhookDelivery } from "../../cloud/webhooks/webhook-delivery.ts";
import { ConsoleAuditPage } from "../../shared/api/console-audit.ts";
import { ConsoleWebhookEndpointList, ConsoleWebhookLog } from "../../shared/api/console-webhooks.ts";
import { type CloudHarness, startCloudHarness } from "../support/cloud-harness.ts";
import {
  type ConsoleStaff,
  consoleRequests,
  expectError,
  type StaffCast,
  signedInCast,
} from "../support/console-api.ts";
import { OP_A, OP_B } from "../support/fixture-site.ts";
import { WebhookReceiver } from "../support/webhook-receiver.ts";

const HOUR = 3_600_000;
const EP_A = "e1e1e1e1-0000-4000-8000-00000000000a";
const EP_B = "e1e1e1e1-0000-4000-8000-00000000000b";
const SECRET = `whsec_${randomBytes(32).toString("base64")}`;

let h: CloudHarness;
let worker: WebhookDelivery;
let receiver: WebhookReceiver;
let staff: StaffCast;

/** One direct endpoint of `op` for alarms, on the test receiver (loopback: allow_private). */
function declare(op: string, id: string) {
  return applyManifest(
    h.db,
    SiteManifest.parse({
      version: 1,
      operators: [
        {
          id: op,
          name: op === OP_A ? "Operator A" : "Operator B",
          webhooks: [
            {
              id,
              url: receiver.url,
              types: ["alarm"],
              delivery: "direct",
              allow_private: true,
              secret: SECRET,
            },
          ],
        },
      ],
    }),
    h.clock,
    {},
  );
}

beforeEach(async () => {
  h = await startCloudHarness({ console: { idleTimeoutMs: 24 * HOUR } });
  receiver = await new WebhookReceiver(() => h.clock.now()).start();
  worker = startWebhookDelivery({ db: h.db, clock: h.clock, log: pino({ level: "silent" }) });
  await declare(OP_A, EP_A);
  await declare(OP_B, EP_B);
  staff = await signedInCast(h);
});
afterEach(async () => {
  await worker.stop();
  await receiver.stop();
  await h.close();
});

const { get, post } = consoleRequests(() => h);

async function logOf(who: ConsoleStaff, id: string, query = ""): Promise<ConsoleWebhookLog> {
  const res = await get(who, `/console/api/webhooks/${id}${query}`);
  expect(res.statusCode, res.body).toBe(200);
  return ConsoleWebhookLog.parse(res.json());
}

/** An alarm of operator `op`, sent by the worker; the receiver answers `status`. */
async function alarmDelivered(op = OP_A, status = 200): Promise<void> {
  receiver.answer = () => status;
  await recordSiteEvent(h.db, {
    operatorId: op,
    type: "alarm",
    data: { alarm: "tamper" },
    at: h.clock.now(),
  });
  h.clock.advance(1_000);
  await worker.tick();
}

async function auditOf(id: string, who = staff.viewer) {
  const res = await get(who, `/console/api/audit?subject_type=webhook_endpoint&subject_id=${id}`);
  return ConsoleAuditPage.parse(res.json()).data;
}

describe("the console's webhooks", () => {
  it("lists the operator's endpoints only, with the last attempt", async () => {
    await alarmDelivered(OP_A, 503);
    const res = await get(staff.viewer, "/console/api/webhooks");
    expect(res.statusCode, res.body).toBe(200);
    const { data } = ConsoleWebhookEndpointList.parse(res.json());
    expect(data.map((e) => e.id)).toEqual([EP_A]);
    expect(data[0]).toMatchObject({
      url: receiver.url,
      types: ["alarm"],
      enabled: true,
      last_attempt: { attempt: 1, status_code: 503, error: "HTTP 503" },
    });
    // A superadmin reads every operator's endpoints.
    const all = ConsoleWebhookEndpointList.parse(
      (await get(staff.superadmin, "/console/api/webhooks")).json(),
    );
    expect(all.data.map((e) => e.id).sort()).toEqual([EP_A, EP_B].sort());
  });

  it("shows the delivery log newest first with every attempt, a page at a time", async () => {
    await alarmDelivered(OP_A, 500);
    receiver.answer = () => 200;
    h.clock.advance(60_000);
    await worker.tick();
    await alarmDelivered(OP_A, 200);
    const log = await logOf(staff.viewer, EP_A);
    expect(log.deliveries.map((d) => [d.type, d.status, d.attempts.map((a) => a.status_code)])).toEqual([
      ["alarm", "delivered", [200]],
      ["alarm", "delivered", [500, 200]],
    ]);
    const sent = receiver.delivered.map((r) => JSON.parse(r.body).id);
    expect(sent.reverse()).toEqual(log.deliveries.map((d) => d.id));
    expect(log.deliveries[0]?.event_ids).toEqual([expect.stringMatching(/^evt_/)]);
    const first = await logOf(staff.viewer, EP_A, "?limit=1");
    expect(first.deliveries.map((d) => d.id)).toEqual([log.deliveries[0]?.id]);
    const second = await logOf(staff.viewer, EP_A, `?limit=1&cursor=${first.next_cursor}`);
    expect(second.deliveries.map((d) => d.id)).toEqual([log.deliveries[1]?.id]);
    expect(second.next_cursor).toBeNull();
    expectError(
      await get(staff.viewer, `/console/api/webhooks/${EP_A}?cursor=nonsense`),
      400,
      "ERRORS.INVALID_PAGINATION_TOKEN",
    );
    expectError(
      await get(staff.viewer, `/console/api/webhooks/${EP_A}?limit=0`),
      400,
      "ERRORS.VALIDATION_FAILED",
    );
  });

  it("replays a delivery under its stable id, which the worker sends again; audited", async () => {
    await alarmDelivered();
    const [delivery] = (await logOf(staff.operator, EP_A)).deliveries;
    const id = delivery?.id ?? "";
    const res = await post(staff.operator, `/console/api/webhooks/${EP_A}/deliveries/${id}/replay`);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ message_id: id, endpoint_id: EP_A, endpoint_enabled: true });
    // Pending now: replaying again is refused until it is sent.
    expectError(
      await post(staff.operator, `/console/api/webhooks/${EP_A}/deliveries/${id}/replay`),
      400,
      "ERRORS.BAD_REQUEST",
    );
    h.clock.advance(1_000);
    await worker.tick();
    expect(receiver.delivered.map((r) => [r.headers["webhook-id"], JSON.parse(r.body).id])).toEqual([
      [id, id],
      [id, id],
    ]);
    expect(receiver.delivered[1]?.body).toBe(receiver.delivered[0]?.body);
    const after = (await logOf(staff.viewer, EP_A)).deliveries;
    expect(after.map((d) => [d.id, d.status, d.attempts.length])).toEqual([[id, "delivered", 2]]);
    expect((await auditOf(EP_A)).map((e) => [e.action, e.actor.name, e.comment])).toEqual([
      ["webhook.replay", "operator@a.example", `message ${id}`],
    ]);
  });

  it("sends a test event through the queue, which the worker delivers; audited", async () => {
    const res = await post(staff.operator, `/console/api/webhooks/${EP_A}/test-event`);
    expect(res.statusCode, res.body).toBe(200);
    const id = res.json().message_id as string;
    h.clock.advance(1_000);
    await worker.tick();
    expect(receiver.delivered).toHaveLength(1);
    const body = JSON.parse(receiver.delivered[0]?.body ?? "{}");
    expect(body).toMatchObject({ id, type: "test", data: { events: [{ type: "test", location_id: null }] } });
    expect(receiver.delivered[0]?.headers["webhook-id"]).toBe(id);
    const [shown] = (await logOf(staff.viewer, EP_A)).deliveries;
    expect(shown).toMatchObject({ id, type: "test", status: "delivered", attempts: [{ status_code: 200 }] });
    expect((await auditOf(EP_A)).map((e) => e.action)).toEqual(["webhook.test_event"]);
  });

  it("refuses a viewer's actions with 403 and changes nothing", async () => {
    await alarmDelivered();
    const [delivery] = (await logOf(staff.viewer, EP_A)).deliveries;
    expectError(
      await post(staff.viewer, `/console/api/webhooks/${EP_A}/deliveries/${delivery?.id}/replay`),
      403,
      "ERRORS.FORBIDDEN",
    );
    expectError(
      await post(staff.viewer, `/console/api/webhooks/${EP_A}/test-event`),
      403,
      "ERRORS.FORBIDDEN",
    );
    h.clock.advance(1_000);
    await worker.tick();
    expect(receiver.received).toHaveLength(1);
    expect((await logOf(staff.viewer, EP_A)).deliveries.map((d) => d.status)).toEqual(["delivered"]);
    expect(await auditOf(EP_A)).toEqual([]);
  });

  it("answers 404 for another operator's endpoint and its deliveries, and acting on them changes nothing", async () => {
    await alarmDelivered(OP_B);
    const other = await get(staff.otherOperator, `/console/api/webhooks/${EP_B}`);
    const bDelivery = ConsoleWebhookLog.parse(other.json()).deliveries[0]?.id ?? "";
    expectError(await get(staff.operator, `/console/api/webhooks/${EP_B}`), 404, "ERRORS.NOT_FOUND");
    expectError(
      await post(staff.operator, `/console/api/webhooks/${EP_B}/test-event`),
      404,
      "ERRORS.NOT_FOUND",
    );
    expectError(
      await post(staff.operator, `/console/api/webhooks/${EP_B}/deliveries/${bDelivery}/replay`),
      404,
      "ERRORS.NOT_FOUND",
    );
    // B's delivery named under A's endpoint is no delivery of it either.
    expectError(
      await post(staff.operator, `/console/api/webhooks/${EP_A}/deliveries/${bDelivery}/replay`),
      404,
      "ERRORS.NOT_FOUND",
    );
    h.clock.advance(1_000);
    await worker.tick();
    expect(receiver.received).toHaveLength(1);
    expect(await auditOf(EP_B, staff.otherOperator)).toEqual([]);
  });
});
