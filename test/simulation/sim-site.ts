import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import path from "node:path";
import { hashSecret } from "../../cloud/auth/secrets.ts";
import { applyManifest, derivedId } from "../../cloud/manifest/apply-manifest.ts";
import { SiteManifest } from "../../cloud/manifest/manifest-schema.ts";
import { openDb } from "../../cloud/store/db.ts";
import { riderId } from "../../cloud/users/declare-riders.ts";
import { PERMISSIONS } from "../../shared/api/permissions.ts";
import { systemClock } from "../../shared/node/system-clock.ts";
import { SCRATCH } from "./scratch.ts";

/** The simulated operator, its API client and every gateway's secret. */
export const OPERATOR = "5a5a5a5a-0000-4000-8000-000000000001";
export const ADMIN = "sim-admin";
export const SECRET = "simulation-secret-123";
export const LOCATION = "S1";
/** Lockers per gateway, on board 1 of the gateway's bus0, channels 1..N. */
export const LOCKERS = 4;
/** Readers per gateway: reader-N serves locker N (rfid_parking: a tap locks a free locker for the card). */
export const READERS = 2;
/** Each gateway's door: on GPIO (`door_strike:<alias>`, `door_contact:<alias>`), with a reader of its own. */
export const DOOR_READER = "reader-door";
/** A door open this long is reported held open (the daemon's `door_held_open_s`; 300 in the field). */
export const HELD_OPEN_S = 20;
/** How often the daemon checks open doors against HELD_OPEN_S (`door_watch_s`). */
export const DOOR_WATCH_S = 2;
/** Virtual time at the start of every run. */
export const START = Date.parse("2026-03-02T07:00:00.000Z");

/** Whitelists of the site: one kept on the gateways (keys_only), one the gateways ask the cloud about. */
export const KEPT_WHITELIST = "5a5a5a5a-0000-4000-8000-0000000000a1";
export const ASKED_WHITELIST = "5a5a5a5a-0000-4000-8000-0000000000a2";

/**
 * The cards tapped: kept ones (valid, master, expired before the run, expiring during it, inactive), one
 * only the cloud knows, and one nobody knows.
 */
export const CARDS = {
  ann: "a1a1",
  bob: "b2b2",
  master: "f0f0",
  expired: "e1e1",
  expiring: "e2e2",
  inactive: "d1d1",
  asked: "c1c1",
  unknown: "0bad",
} as const;
/** When the expiring card stops opening anything: inside the run's chaos. */
export const EXPIRING_AT = START + 40_000;

/** The operator's webhook endpoint: every site event sent at once (direct), to the run's own receiver. */
export const WEBHOOK_ENDPOINT = "5a5a5a5a-0000-4000-8000-0000000000b1";
export const WEBHOOK_SECRET = `whsec_${Buffer.from("simulation-webhook-secret-of-32b").toString("base64")}`;

/** Riders of the operator: each may take a free locker, and only its own back. */
export const RIDERS = ["ann", "bob", "cem"].map((userId) => ({
  userId,
  id: riderId(derivedId, OPERATOR, userId),
}));

export const gatewayIds = (n: number) => Array.from({ length: n }, (_, i) => `gw-${i + 1}`);
export const deviceAlias = (gatewayId: string, channel: number) => `${gatewayId}-${channel}`;
export const doorAlias = (gatewayId: string) => `${gatewayId}-door`;
export const locationId = derivedId(OPERATOR, "location", LOCATION);
export const deviceId = (alias: string) => derivedId(locationId, "device", alias);

/**
 * One location with `gateways` gateways of LOCKERS lockers and a door each; the lockers start free (latch
 * open), the doors locked and closed.
 */
function manifest(gateways: number, secretHash: string) {
  return SiteManifest.parse({
    version: 1,
    operators: [
      {
        id: OPERATOR,
        name: "Simulated operator",
        clients: [{ client_id: ADMIN, permissions: [...PERMISSIONS], secret_hash: secretHash }],
        riders: RIDERS.map((r) => ({ user_id: r.userId })),
        webhooks: [
          {
            id: WEBHOOK_ENDPOINT,
            url: "http://hooks.sim/in",
            secret: WEBHOOK_SECRET,
            delivery: "direct",
            allow_private: true,
          },
        ],
        // Riders' sessions cost something, so their ends settle a fee and a payment.
        price_lists: [
          { code: "P1", name: "Per minute", currency: "EUR", period_minutes: 1, price_per_period: "0.10" },
        ],
        locations: [
          {
            code: LOCATION,
            label: "Simulated lockers",
            type: "BIKE_LOCKERS",
            latitude: 52.37,
            longitude: 4.89,
            attrs: { rfid_parking: true },
            price_list: "P1",
            gateways: gatewayIds(gateways).map((id) => ({
              id,
              secret_hash: secretHash,
              devices: [
                ...Array.from({ length: LOCKERS }, (_, i) => ({
                  alias: deviceAlias(id, i + 1),
                  type: "LOCKER",
                  bus: { board: 1, channel: i + 1 },
                })),
                { alias: doorAlias(id), type: "BIKE_HOUSE_DOOR" },
              ],
            })),
          },
        ],
        whitelists: [
          {
            id: KEPT_WHITELIST,
            name: "Kept cards",
            keys_only: true,
            targets: [{ location: LOCATION }],
            entities: [
              { id: CARDS.ann },
              { id: CARDS.bob },
              { id: CARDS.master, is_master_key: true },
              { id: CARDS.expired, expires_at: new Date(START - 3_600_000).toISOString() },
              { id: CARDS.expiring, expires_at: new Date(EXPIRING_AT).toISOString() },
              { id: CARDS.inactive, status: "INACTIVE" },
            ],
          },
          {
            id: ASKED_WHITELIST,
            name: "Asked cards",
            keys_only: false,
            targets: [{ location: LOCATION }],
            entities: [{ id: CARDS.asked }],
          },
        ],
      },
    ],
  });
}

const templates = new Map<number, string>();

/**
 * A migrated cloud store with the simulated site applied, copied from a template made once per process
 * (migrations and the secrets' scrypt cost more than a whole short run).
 */
export async function siteStoreFile(gateways: number): Promise<{ file: string; remove(): void }> {
  let template = templates.get(gateways);
  if (!template) {
    const dir = mkdtempSync(path.join(SCRATCH, "parking-sim-template-"));
    template = path.join(dir, "cloud.db");
    const db = await openDb({ kind: "sqlite", file: template });
    // The least cost secrets.ts accepts: every sign-in of every run pays it.
    const hash = await hashSecret(SECRET, { ln: 10, r: 8, p: 1 });
    await applyManifest(db, manifest(gateways, hash), systemClock);
    await db.destroy();
    templates.set(gateways, template);
  }
  const dir = mkdtempSync(path.join(SCRATCH, "parking-sim-"));
  const file = path.join(dir, "cloud.db");
  copyFileSync(template, file);
  return { file, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
