import Database from "better-sqlite3";
import { keySyncRepository } from "../../cloud/key-sync/key-sync-repository.ts";
import type { Db } from "../../cloud/store/db.ts";
import type { Grant } from "../../shared/wire/messages.ts";

/** A key set at one end: its version and its grants. */
export type KeySet = { version: number; grants: Grant[] };

/** A gateway's key cache as its own store holds it (gateway/adapters/sqlite/key-cache.ts), read beside the daemon. */
function readKeyCache(file: string): KeySet {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const { version } = db.prepare("SELECT version FROM key_state WHERE id = 1").get() as { version: number };
    const rows = db.prepare("SELECT * FROM key_grants ORDER BY card_id, whitelist_id").all() as {
      card_id: string;
      whitelist_id: string;
      active: number;
      expires_at: string | null;
      master: number;
      targets: string;
    }[];
    const grants = rows.map((r): Grant => {
      const [location_ids, device_ids] = JSON.parse(r.targets) as [string[], string[]];
      return {
        card_id: r.card_id,
        whitelist_id: r.whitelist_id,
        status: r.active === 1 ? "ACTIVE" : "INACTIVE",
        expires_at: r.expires_at,
        is_master_key: r.master === 1,
        location_ids,
        device_ids,
      };
    });
    return { version, grants };
  } finally {
    db.close();
  }
}

/** One grant as a comparable line, its expiry as an instant whatever its notation. */
const lineOf = (g: Grant) =>
  [
    g.card_id,
    g.whitelist_id,
    g.status,
    g.expires_at === null ? "never" : new Date(g.expires_at).toISOString(),
    g.is_master_key ? "master" : "-",
    JSON.stringify([g.location_ids, g.device_ids]),
  ].join(" ");

/**
 * A gateway's key cache is the cloud's view of it: the same version, and the same grants but for those
 * expired by the cloud's time (`now`), which the gateway's sweep may have deleted or not yet.
 */
export function judgeKeyCache(gateway: string, cloud: KeySet, held: KeySet, now: number): string[] {
  const failures: string[] = [];
  if (held.version !== cloud.version)
    failures.push(
      `${gateway}: its key cache is at version ${held.version}, the cloud's view of it at ${cloud.version}`,
    );
  const live = (g: Grant) => g.expires_at === null || Date.parse(g.expires_at) > now;
  const want = new Set(cloud.grants.filter(live).map(lineOf));
  const have = new Set(held.grants.filter(live).map(lineOf));
  for (const l of want) if (!have.has(l)) failures.push(`${gateway}: its key cache lacks ${l}`);
  for (const l of have)
    if (!want.has(l)) failures.push(`${gateway}: its key cache holds ${l}, the cloud's view does not`);
  return failures;
}

/** Every gateway's key cache has converged on the cloud's view once the world ran quiet, whatever edits its link missed. */
export async function keysConverged(
  db: Db,
  gateways: { id: string; file: string }[],
  now: number,
): Promise<string[]> {
  const failures: string[] = [];
  const keys = keySyncRepository(db);
  for (const g of gateways) {
    const cloud = { version: (await keys.versionsOf(g.id)).version, grants: await keys.grantsOf(g.id) };
    failures.push(...judgeKeyCache(g.id, cloud, readKeyCache(g.file), now));
  }
  return failures;
}
