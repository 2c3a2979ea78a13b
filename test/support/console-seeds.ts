import { randomBytes } from "node:crypto";
import pino from "pino";
import { applyManifest } from "../../cloud/manifest/apply-manifest.ts";
import { SiteManifest } from "../../cloud/manifest/manifest-schema.ts";
import { sessionRepository } from "../../cloud/sessions/session-repository.ts";
import { recordSiteEvent } from "../../cloud/webhooks/site-events.ts";
import { startWebhookDelivery } from "../../cloud/webhooks/webhook-delivery.ts";
import type { Command } from "../../shared/api/command.ts";
import { declareKeysFixture, KEYS, reportKeyVersion } from "./console-keys-fixture.ts";
import type { ConsoleSite } from "./console-site.ts";
import { CLIENTS, fx, OP_A } from "./fixture-site.ts";
import { gatewayReports } from "./gateway-reports.ts";
import { rider, riderFlow } from "./rider-sessions.ts";
import { WebhookReceiver } from "./webhook-receiver.ts";

/** What the console's views show once seeded: the ids their addresses name. */
export type ConsoleSeeds = {
  locationId: string;
  deviceId: string;
  sessionId: string;
  alarmDevice: string;
  /** A rider (service user id) with the active session. */
  riderId: string;
  /** Operator A's whitelist, its cards, and its access list with a member and an invite. */
  whitelistId: string;
  accessListId: string;
  /** A webhook endpoint with one delivery: refused once (HTTP 500), then delivered (HTTP 200). */
  webhookId: string;
};

const WEBHOOK = "e1e1e1e1-0000-4000-8000-0000000000d1";

/**
 * Something on every view of the fixture site's console: a force-locked locker (its timeline and the audit
 * log have an entry), a rider's active session on another locker, a tamper alarm on the first, the keys
 * fixture's whitelist (in sync on both gateways) and access list (a member and an invite), and a webhook
 * endpoint with a delivery of two attempts.
 */
export async function seedConsole(site: ConsoleSite): Promise<ConsoleSeeds> {
  const h = site.h;
  await seedKeys(site);
  const locker = fx.device("L1", "1");
  const priced = fx.device("L1", "2");
  // Sequence numbers far from those of other helpers on the same gateway.
  const gw = gatewayReports(() => h, 200_000);
  const res = await h.call(CLIENTS.admin, {
    method: "POST",
    url: `/device/v1/devices/${locker}/commands`,
    payload: { command: "force-lock" },
  });
  if (res.statusCode !== 200) throw new Error(`force-lock refused: ${res.body}`);
  await gw.progress("gw-a1", res.json<Command>(), "SUCCESS", { lock_state: "LOCKED" });
  h.clock.advance(20_000);

  const alice = await rider(h, OP_A, "alice");
  await riderFlow(h).lock(alice, priced);
  const [session] = await sessionRepository(h.db).onDevice(priced, ["active"]);
  if (!session) throw new Error("the rider's lock opened no session");

  await h.report("gw-a1", {
    type: "hardware_event",
    gateway_id: "gw-a1",
    seq: gw.nextSeq(),
    observed_at: h.clock.now().toISOString(),
    device_id: locker,
    source: "bus0/1/1",
    event: "tamper",
    detail: "",
  });
  await seedWebhook(site);
  return {
    locationId: fx.location("L1"),
    deviceId: locker,
    sessionId: session.id,
    alarmDevice: "1",
    riderId: alice.id,
    whitelistId: KEYS.whitelist,
    accessListId: KEYS.list,
    webhookId: WEBHOOK,
  };
}

/** The keys fixture, both gateways holding its version, and a member and an invite on the access list. */
async function seedKeys(site: ConsoleSite): Promise<void> {
  const h = site.h;
  await declareKeysFixture(h);
  await reportKeyVersion(h, "gw-a1", 1);
  await reportKeyVersion(h, "gw-a2", 1);
  const usersUrl = `/access-control/v1/mgmt/access-lists/${KEYS.list}/users`;
  for (const payload of [{ user_id: KEYS.riderA }, { phone_number: KEYS.invitedPhone }]) {
    const res = await h.call(CLIENTS.admin, { method: "POST", url: usersUrl, payload });
    if (res.statusCode !== 204) throw new Error(`access list refused: ${res.body}`);
  }
}

/** An endpoint of operator A for alarms; one alarm refused once (500), then delivered a minute later. */
async function seedWebhook(site: ConsoleSite): Promise<void> {
  const h = site.h;
  const receiver = await new WebhookReceiver(() => h.clock.now()).start();
  const worker = startWebhookDelivery({ db: h.db, clock: h.clock, log: pino({ level: "silent" }) });
  try {
    const webhook = {
      id: WEBHOOK,
      url: receiver.url,
      types: ["alarm"],
      delivery: "direct",
      allow_private: true,
      secret: `whsec_${randomBytes(32).toString("base64")}`,
    };
    const manifest = { version: 1, operators: [{ id: OP_A, name: "Operator A", webhooks: [webhook] }] };
    await applyManifest(h.db, SiteManifest.parse(manifest), h.clock, {});
    receiver.answer = () => 500;
    await recordSiteEvent(h.db, { operatorId: OP_A, type: "alarm", data: {}, at: h.clock.now() });
    h.clock.advance(1_000);
    await worker.tick();
    receiver.answer = () => 200;
    h.clock.advance(60_000);
    await worker.tick();
  } finally {
    await worker.stop();
    await receiver.stop();
  }
}
