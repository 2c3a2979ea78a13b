import { v5 as uuidv5 } from "uuid";
import { readyState } from "../../shared/domain/device-machine.ts";
import { familyOf } from "../../shared/domain/device-types.ts";
import type { Clock } from "../../shared/time/clock.ts";
import { declareAccessLists } from "../access-lists/declare-access-lists.ts";
import { hashSecret, verifySecret } from "../auth/secrets.ts";
import { recordMapVersions } from "../gateway-link/device-map.ts";
import { LocationAttrs } from "../locations/location-attrs.ts";
import { declarePriceLists } from "../sessions/price-lists.ts";
import type { Db } from "../store/db.ts";
import { DeviceAttrs } from "../store/tables/device-attrs.ts";
import { declareRiders } from "../users/declare-riders.ts";
import { declareWebhooks } from "../webhooks/declare-webhooks.ts";
import { declareWhitelists } from "../whitelists/declare-whitelists.ts";
import { crossReferences, describePath } from "./manifest-problems.ts";
import type { SiteManifest } from "./manifest-schema.ts";

/** Namespace for ids derived from manifest names, so re-applying a manifest finds the same rows. */
const NAMESPACE = "3b0c4f52-52d6-4a55-9f36-1c1a3b3c9e10";

export const derivedId = (...parts: string[]) => uuidv5(parts.join("/"), NAMESPACE);

export type ApplySummary = { created: number; updated: number };

type Env = Record<string, string | undefined>;

/**
 * Cross-references zod cannot see (duplicate ids, codes and aliases; public areas naming unknown codes),
 * each as `where: key: message` with the objects named as in the manifest. `readManifest` reports these
 * with file lines; apply checks again, for manifests built in code.
 */
export function checkManifest(m: SiteManifest): string[] {
  return crossReferences(m).map((p) => {
    const { where, key } = describePath(m, p.path);
    const first = p.related ? describePath(m, p.related).where : "";
    const also = first && first !== where ? ` (first at ${first})` : "";
    return `${[where, key].filter(Boolean).join(": ")}: ${p.message}${also}`;
  });
}

async function secretHash(
  s: { secret?: string; secret_env?: string; secret_hash?: string },
  current: string | undefined,
  env: Env,
  where: string,
): Promise<string> {
  if (s.secret_hash) return s.secret_hash;
  const plain = s.secret ?? (s.secret_env ? env[s.secret_env] : undefined);
  if (!plain) throw new Error(`${where}: secret_env: environment variable ${s.secret_env} is not set`);
  // Keep the stored hash when the secret did not change, so re-applying writes nothing.
  if (current && (await verifySecret(plain, current))) return current;
  return hashSecret(plain);
}

/**
 * Applies a manifest idempotently: creates what is missing, updates what changed, never touches a
 * device's runtime state (state, health, occupant) and never deletes.
 */
export async function applyManifest(
  db: Db,
  m: SiteManifest,
  clock: Clock,
  env: Env = process.env,
): Promise<ApplySummary> {
  const problems = checkManifest(m);
  if (problems.length > 0) throw new Error(`invalid manifest:\n  ${problems.join("\n  ")}`);
  const ts = clock.now().toISOString();
  const summary: ApplySummary = { created: 0, updated: 0 };

  // Hash secrets before the transaction: scrypt is deliberately slow.
  const clientHashes = new Map<string, string>();
  const gatewayHashes = new Map<string, string>();
  for (const op of m.operators) {
    for (const c of op.clients) {
      const row = await db
        .selectFrom("api_clients")
        .select("secret_hash")
        .where("client_id", "=", c.client_id)
        .executeTakeFirst();
      clientHashes.set(c.client_id, await secretHash(c, row?.secret_hash, env, `client ${c.client_id}`));
    }
    for (const loc of op.locations) {
      for (const gw of loc.gateways) {
        const row = await db
          .selectFrom("gateways")
          .select("secret_hash")
          .where("id", "=", gw.id)
          .executeTakeFirst();
        gatewayHashes.set(gw.id, await secretHash(gw, row?.secret_hash, env, `gateway ${gw.id}`));
      }
    }
  }

  await db.transaction().execute(async (trx) => {
    async function upsert<T extends keyof import("../store/schema.ts").Database>(
      table: T,
      key: Record<string, string>,
      insert: Record<string, unknown>,
      update: Record<string, unknown>,
    ) {
      let q = trx.selectFrom(table as "operators").selectAll();
      for (const [k, v] of Object.entries(key)) q = q.where(k as "id", "=", v);
      const existing = (await q.executeTakeFirst()) as Record<string, unknown> | undefined;
      if (!existing) {
        await trx
          .insertInto(table as "operators")
          .values({ ...key, ...insert, ...update } as never)
          .execute();
        summary.created++;
        return;
      }
      // Unchanged rows are left alone, so re-applying a manifest writes nothing (not even updated_at).
      const changed = Object.entries(update).some(([k, v]) => k !== "updated_at" && existing[k] !== v);
      if (!changed) return;
      let u = trx.updateTable(table as "operators").set(update as never);
      for (const [k, v] of Object.entries(key)) u = u.where(k as "id", "=", v);
      await u.execute();
      summary.updated++;
    }

    for (const op of m.operators) {
      await upsert("operators", { id: op.id }, { created_at: ts }, { name: op.name });
      const riders = await declareRiders(trx, { operatorId: op.id, ts, derive: derivedId, env }, op);
      summary.created += riders.created;
      summary.updated += riders.updated;
      const webhooks = await declareWebhooks(trx, { operatorId: op.id, ts, env }, op.webhooks);
      summary.created += webhooks.created;
      summary.updated += webhooks.updated;
      for (const c of op.clients) {
        await upsert(
          "api_clients",
          { client_id: c.client_id },
          { created_at: ts },
          {
            operator_id: op.id,
            name: c.name,
            secret_hash: clientHashes.get(c.client_id),
            permissions: JSON.stringify(c.permissions),
          },
        );
      }
      const priceLists = await declarePriceLists(
        trx,
        { operatorId: op.id, ts, idOf: (code) => derivedId(op.id, "price-list", code) },
        op.price_lists,
      );
      summary.created += priceLists.created;
      summary.updated += priceLists.updated;
      const locationIds = new Map<string, string>();
      for (const loc of op.locations) {
        const locationId = loc.id ?? derivedId(op.id, "location", loc.code);
        locationIds.set(loc.code, locationId);
        const stored = await trx
          .selectFrom("locations")
          .select("attrs")
          .where("id", "=", locationId)
          .executeTakeFirst();
        const previous = stored
          ? (JSON.parse(stored.attrs) as Record<string, unknown>)
          : { operator_id: op.id };
        // The lists the manifest declares are the ones in force (cloud/access-lists/declare-access-lists.ts).
        const accessListIds = loc.access_lists.map((l) => l.id);
        const hasAccessLists = accessListIds.length > 0;
        const attrs = LocationAttrs.parse({
          ...previous,
          ...loc.attrs,
          has_access_lists: hasAccessLists,
          access_list_ids: accessListIds,
        });
        await upsert(
          "locations",
          { id: locationId },
          { created_at: ts },
          {
            operator_id: op.id,
            code: loc.code,
            label: loc.label,
            type: loc.type,
            status: loc.status,
            latitude: loc.latitude,
            longitude: loc.longitude,
            tags: JSON.stringify(loc.tags),
            attrs: JSON.stringify(attrs),
            updated_at: ts,
          },
        );
        for (const gw of loc.gateways) {
          await upsert(
            "gateways",
            { id: gw.id },
            { created_at: ts, online: null, status_at: null },
            { operator_id: op.id, location_id: locationId, secret_hash: gatewayHashes.get(gw.id) },
          );
          const devices = [
            {
              id: gw.guard_id ?? derivedId("gateway", gw.id),
              alias: gw.id,
              type: "GUARD" as const,
              camera: gw.camera,
              d: null,
            },
            ...gw.devices.map((device) => ({
              id: device.id ?? derivedId(locationId, "device", device.alias),
              alias: device.alias,
              type: device.type,
              camera: false,
              d: device,
            })),
          ];
          for (const dev of devices) {
            const device = dev.d;
            await upsert(
              "devices",
              { id: dev.id },
              {
                state_value: readyState(familyOf(dev.type)),
                state_changed_at: ts,
                state_timeout_at: null,
                state_restore: null,
                lock_state: familyOf(dev.type) === "door" ? "LOCKED" : "UNLOCKED",
                hardware_state: "NORMAL",
                sleep_state: "",
                seen_at: null,
                // Not before a heartbeat reaches it; the GUARD is the gateway itself.
                reachable: dev.type === "GUARD" ? 1 : 0,
                offline_at: null,
                user_id: null,
                user_access_key: null,
                booked_by: null,
                command_id: null,
                last_lock_command_at: null,
                version: 0,
                created_at: ts,
              },
              {
                operator_id: op.id,
                location_id: locationId,
                gateway_id: gw.id,
                type: dev.type,
                alias: dev.alias,
                code: device?.code ?? "",
                hardware_id: device?.hardware_id ?? "",
                has_camera: dev.camera ? 1 : 0,
                power_save_strategy: device?.power_save_strategy ?? "NONE",
                attrs: JSON.stringify(
                  DeviceAttrs.parse({
                    tags: device?.tags ?? [],
                    comment: device?.comment ?? "",
                    bus: device?.bus ?? null,
                    has_access_lists: hasAccessLists,
                    // What the device's sessions cost: its own price list, else its location's.
                    price_list_id: device
                      ? (priceLists.ids.get(device.price_list ?? loc.price_list ?? "") ?? null)
                      : null,
                  }),
                ),
                updated_at: ts,
              },
            );
          }
        }
      }
      for (const loc of op.locations) {
        const declared = await declareAccessLists(
          trx,
          { operatorId: op.id, locationId: locationIds.get(loc.code) as string, ts },
          loc.access_lists,
        );
        summary.created += declared.created;
        summary.updated += declared.updated;
      }
      // Key sync records the changed whitelists' new key versions here; running clouds' sweep sends them.
      const whitelists = await declareWhitelists(
        trx,
        { operatorId: op.id, ts, now: clock.now(), locationIds },
        op.whitelists,
      );
      summary.created += whitelists.created;
      summary.updated += whitelists.updated;
      for (const pa of op.public_areas) {
        await upsert("public_areas", { id: pa.id }, {}, { operator_id: op.id, name: pa.name });
        for (const code of pa.locations) {
          const locationId = locationIds.get(code) as string;
          const link = await trx
            .selectFrom("public_area_locations")
            .select("location_id")
            .where("public_area_id", "=", pa.id)
            .where("location_id", "=", locationId)
            .executeTakeFirst();
          if (!link)
            await trx
              .insertInto("public_area_locations")
              .values({ public_area_id: pa.id, location_id: locationId })
              .execute();
        }
      }
    }
    // Running clouds watch these versions and publish the new maps to the gateways at once.
    await recordMapVersions(trx);
  });
  return summary;
}
