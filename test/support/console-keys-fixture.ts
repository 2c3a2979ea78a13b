import pino from "pino";
import { createKeySync } from "../../cloud/key-sync/key-sync.ts";
import { applyManifest } from "../../cloud/manifest/apply-manifest.ts";
import { SiteManifest } from "../../cloud/manifest/manifest-schema.ts";
import { userRepository } from "../../cloud/users/user-repository.ts";
import { type CloudHarness, fixtureSecretHash } from "./cloud-harness.ts";
import { fixtureManifest, OP_A, OP_B } from "./fixture-site.ts";

/** Markup that must show as text wherever the console draws it. */
export const HOSTILE = `<img src=x onerror=alert(1)>`;

/** Operator A's whitelist (L1 and dock 1 of D1, keys_only) and list (closed, at H1); one of operator B each. */
export const KEYS = {
  whitelist: "c1c1c1c1-0000-4000-8000-00000000000a",
  whitelistB: "c1c1c1c1-0000-4000-8000-00000000000b",
  list: "c2c2c2c2-0000-4000-8000-00000000000a",
  listB: "c2c2c2c2-0000-4000-8000-00000000000b",
  /** Riders of operator A (service user ids). */
  riderA: "11111111-1111-4111-8111-1111111111a1",
  riderB: "11111111-1111-4111-8111-1111111111a2",
  riderOfB: "11111111-1111-4111-8111-1111111111b1",
  invitedPhone: "+31612345678",
  /** An expiring card, a master key, and an inactive card with a hostile comment. */
  cards: { expiring: "04a1b2c3d4", master: "0a0b", inactive: "0c0d" },
  expiresAt: "2031-01-01T00:00:00.000Z",
} as const;

/**
 * Declares them through the site manifest, as the service operator would: the fixture with whitelists and
 * access lists added (apply never deletes, so the rest of the fixture stays). Then operator A's riders.
 */
export async function declareKeysFixture(h: CloudHarness): Promise<void> {
  const base = fixtureManifest(await fixtureSecretHash());
  const manifest = SiteManifest.parse({
    ...base,
    operators: base.operators.map((op) => {
      const a = op.id === OP_A;
      return {
        ...op,
        whitelists: [
          a
            ? {
                id: KEYS.whitelist,
                name: "Staff cards",
                description: HOSTILE,
                targets: [{ location: "L1" }, { location: "D1", device: "1" }],
                entities: [
                  { id: KEYS.cards.expiring, expires_at: KEYS.expiresAt },
                  { id: KEYS.cards.master, is_master_key: true },
                  { id: KEYS.cards.inactive, status: "INACTIVE", comment: HOSTILE },
                ],
              }
            : {
                id: KEYS.whitelistB,
                name: "B cards",
                targets: [{ location: "B1" }],
                entities: [{ id: "0b0b" }],
              },
        ],
        locations: op.locations?.map((l) =>
          l.code === "H1" || l.code === "B1"
            ? {
                ...l,
                access_lists: [
                  { id: a ? KEYS.list : KEYS.listB, kind: "closed", name: a ? HOSTILE : "B residents" },
                ],
              }
            : l,
        ),
      };
    }),
  });
  await applyManifest(h.db, manifest, h.clock);
  const users = userRepository(h.db);
  const at = h.clock.now().toISOString();
  await users.insert({ id: KEYS.riderA, operatorId: OP_A, userId: "rider-a", phoneNumber: null }, at);
  await users.insert({ id: KEYS.riderB, operatorId: OP_A, userId: "rider-b", phoneNumber: null }, at);
  await users.insert({ id: KEYS.riderOfB, operatorId: OP_B, userId: "rider-of-b", phoneNumber: null }, at);
}

/** Plays the gateway saying which key version it holds, through the cloud's key sync as over MQTT. */
export async function reportKeyVersion(h: CloudHarness, gatewayId: string, version: number): Promise<void> {
  const sync = createKeySync({
    db: h.db,
    clock: h.clock,
    log: pino({ level: "silent" }),
    reportEveryMs: 0,
    snapshotEveryMs: 0,
    publish: () => Promise.resolve(),
  });
  await sync.onReport(gatewayId, { kind: "version", gateway_id: gatewayId, version });
  await sync.stop();
}
