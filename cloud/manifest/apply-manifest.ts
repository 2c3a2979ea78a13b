import { v5 as uuidv5 } from "uuid";
import { readyState } from "../../shared/domain/device-machine.ts";
import { type DeviceType, familyOf } from "../../shared/domain/device-types.ts";
import type { Clock } from "../../shared/time/clock.ts";
import { declareAccessLists } from "../access-lists/declare-access-lists.ts";
import { hashSecret, verifySecret } from "../auth/secrets.ts";
import { recordMapVersions } from "../gateway-link/device-map.ts";
import { LocationAttrs } from "../locations/location-attrs.ts";
import { declarePriceLists } from "../sessions/price-lists.ts";
import { type DeclaredStaff, declareStaff, staffPasswordHashes } from "../staff/staff-manifest.ts";
import type { Db } from "../store/db.ts";
import { DeviceAttrs } from "../store/tables/device-attrs.ts";
import { declareRiders } from "../users/declare-riders.ts";
import { declareWebhooks } from "../webhooks/declare-webhooks.ts";
import { declareWhitelists } from "../whitelists/declare-whitelists.ts";
import { describePath } from "./manifest-paths.ts";
import { crossReferences } from "./manifest-references.ts";
import { manifestRepository, type Upserted } from "./manifest-repository.ts";
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

type Operator = SiteManifest["operators"][number];
type Location = Operator["locations"][number];
type Gateway = Location["gateways"][number];
type Device = Gateway["devices"][number];

/** What every step of one apply writes with, and the summary it adds to. */
type Apply = {
  trx: Db;
  repo: ReturnType<typeof manifestRepository>;
  ts: string;
  clock: Clock;
  env: Env;
  summary: ApplySummary;
  /** Secret hashes by API client id and by gateway id, computed before the transaction. */
  clientHashes: ReadonlyMap<string, string>;
  gatewayHashes: ReadonlyMap<string, string>;
};

function count(summary: ApplySummary, done: Upserted | ApplySummary): void {
  if (done === "created") summary.created++;
  else if (done === "updated") summary.updated++;
  else if (typeof done === "object") {
    summary.created += done.created;
    summary.updated += done.updated;
  }
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
  const stored = manifestRepository(db);
  const clientHashes = new Map<string, string>();
  const gatewayHashes = new Map<string, string>();
  for (const op of m.operators) {
    for (const c of op.clients) {
      const current = await stored.clientSecretHash(c.client_id);
      clientHashes.set(c.client_id, await secretHash(c, current, env, `client ${c.client_id}`));
    }
    for (const gw of op.locations.flatMap((loc) => loc.gateways)) {
      const current = await stored.gatewaySecretHash(gw.id);
      gatewayHashes.set(gw.id, await secretHash(gw, current, env, `gateway ${gw.id}`));
    }
  }
  const staff: DeclaredStaff[] = [
    ...m.superadmins.map((s) => ({ operatorId: null, staff: s })),
    ...m.operators.flatMap((op) => op.staff.map((s) => ({ operatorId: op.id, staff: s }))),
  ];
  const staffHashes = await staffPasswordHashes(db, staff, env);

  await db.transaction().execute(async (trx) => {
    const repo = manifestRepository(trx);
    const apply: Apply = { trx, repo, ts, clock, env, summary, clientHashes, gatewayHashes };
    for (const op of m.operators) await applyOperator(apply, op);
    count(summary, await declareStaff(trx, { ts, derive: derivedId, hashes: staffHashes }, staff));
    // Running clouds watch these versions and publish the new maps to the gateways at once.
    await recordMapVersions(trx);
  });
  return summary;
}

/** One operator and everything it declares, in dependency order (price lists before the devices naming them). */
async function applyOperator(a: Apply, op: Operator): Promise<void> {
  const { trx, repo, ts, env, summary } = a;
  count(summary, await repo.upsertOperator({ id: op.id, name: op.name }, ts));
  count(summary, await declareRiders(trx, { operatorId: op.id, ts, derive: derivedId, env }, op));
  count(summary, await declareWebhooks(trx, { operatorId: op.id, ts, env }, op.webhooks));
  for (const c of op.clients) {
    const secret_hash = a.clientHashes.get(c.client_id) as string;
    const client = { client_id: c.client_id, operator_id: op.id, name: c.name, secret_hash };
    count(summary, await repo.upsertApiClient({ ...client, permissions: c.permissions }, ts));
  }
  const priceLists = await declarePriceLists(
    trx,
    { operatorId: op.id, ts, idOf: (code) => derivedId(op.id, "price-list", code) },
    op.price_lists,
  );
  count(summary, priceLists);
  const locationIds = new Map<string, string>();
  for (const loc of op.locations) {
    const locationId = loc.id ?? derivedId(op.id, "location", loc.code);
    locationIds.set(loc.code, locationId);
    await applyLocation(a, op, loc, locationId, priceLists.ids);
  }
  for (const loc of op.locations) {
    const declared = await declareAccessLists(
      trx,
      { operatorId: op.id, locationId: locationIds.get(loc.code) as string, ts },
      loc.access_lists,
    );
    count(summary, declared);
  }
  // Key sync records the changed whitelists' new key versions here; running clouds' sweep sends them.
  const whitelists = await declareWhitelists(
    trx,
    { operatorId: op.id, ts, now: a.clock.now(), locationIds },
    op.whitelists,
  );
  count(summary, whitelists);
  for (const pa of op.public_areas) {
    count(summary, await repo.upsertPublicArea({ id: pa.id, operator_id: op.id, name: pa.name }));
    for (const code of pa.locations) await repo.linkPublicArea(pa.id, locationIds.get(code) as string);
  }
}

/** A location, merged over what is stored (fields the manifest does not mention stay), and its gateways. */
async function applyLocation(
  a: Apply,
  op: Operator,
  loc: Location,
  locationId: string,
  priceListIds: ReadonlyMap<string, string>,
): Promise<void> {
  const previous = (await a.repo.locationAttrs(locationId)) ?? { operator_id: op.id };
  // The lists the manifest declares are the ones in force (cloud/access-lists/declare-access-lists.ts).
  const accessListIds = loc.access_lists.map((l) => l.id);
  const hasAccessLists = accessListIds.length > 0;
  const attrs = LocationAttrs.parse({
    ...previous,
    ...loc.attrs,
    has_access_lists: hasAccessLists,
    access_list_ids: accessListIds,
  });
  const upserted = await a.repo.upsertLocation(
    {
      id: locationId,
      operator_id: op.id,
      code: loc.code,
      label: loc.label,
      type: loc.type,
      status: loc.status,
      latitude: loc.latitude,
      longitude: loc.longitude,
      tags: loc.tags,
      attrs,
    },
    a.ts,
  );
  count(a.summary, upserted);
  for (const gw of loc.gateways) {
    const secret_hash = a.gatewayHashes.get(gw.id) as string;
    const gateway = { id: gw.id, operator_id: op.id, location_id: locationId, secret_hash };
    count(a.summary, await a.repo.upsertGateway(gateway, a.ts));
    // The gateway itself is a device too: its GUARD.
    const guard = { id: gw.guard_id ?? derivedId("gateway", gw.id), alias: gw.id, camera: gw.camera };
    await applyDevice(
      a,
      { op, loc, locationId, gatewayId: gw.id, hasAccessLists, priceListIds },
      guard,
      null,
    );
    for (const device of gw.devices) {
      const id = device.id ?? derivedId(locationId, "device", device.alias);
      const declared = { id, alias: device.alias, camera: false };
      await applyDevice(
        a,
        { op, loc, locationId, gatewayId: gw.id, hasAccessLists, priceListIds },
        declared,
        device,
      );
    }
  }
}

/** Where a device is declared: its operator, location and gateway, and what it inherits from them. */
type DeviceSite = {
  op: Operator;
  loc: Location;
  locationId: string;
  gatewayId: string;
  hasAccessLists: boolean;
  priceListIds: ReadonlyMap<string, string>;
};

/** One device (`device` null: the gateway's GUARD); a new one starts ready, its runtime state its own after. */
async function applyDevice(
  a: Apply,
  at: DeviceSite,
  dev: { id: string; alias: string; camera: boolean },
  device: Device | null,
): Promise<void> {
  const type: DeviceType = device?.type ?? "GUARD";
  const attrs = DeviceAttrs.parse({
    tags: device?.tags ?? [],
    comment: device?.comment ?? "",
    bus: device?.bus ?? null,
    has_access_lists: at.hasAccessLists,
    // What the device's sessions cost: its own price list, else its location's.
    price_list_id: device
      ? (at.priceListIds.get(device.price_list ?? at.loc.price_list ?? "") ?? null)
      : null,
  });
  const declared = {
    id: dev.id,
    operator_id: at.op.id,
    location_id: at.locationId,
    gateway_id: at.gatewayId,
    type,
    alias: dev.alias,
    code: device?.code ?? "",
    hardware_id: device?.hardware_id ?? "",
    has_camera: dev.camera,
    power_save_strategy: device?.power_save_strategy ?? "NONE",
    attrs,
  };
  const fresh = {
    state_value: readyState(familyOf(type)),
    lock_state: familyOf(type) === "door" ? ("LOCKED" as const) : ("UNLOCKED" as const),
    // Not before a heartbeat reaches it; the GUARD is the gateway itself.
    reachable: type === "GUARD",
  };
  count(a.summary, await a.repo.upsertDevice(declared, fresh, a.ts));
}
