import type { Logger } from "pino";
import type { Clock } from "../../shared/time/clock.ts";
import { every } from "../../shared/time/every.ts";
import type { Db } from "../store/db.ts";

type Tx = Pick<Db, "selectFrom" | "updateTable" | "deleteFrom">;

/** How long and how many take-photo photos are kept (docs/decisions/photos.md). */
export type PhotoRetention = {
  /** A photo is deleted this long after it arrived; parts of one that never became whole too. */
  maxAgeMs: number;
  /** At most this many photos per device: a new one deletes the oldest past it. */
  perDevice: number;
};

/** 30 days and 50 per device: a few photos a day per site, looked at when something happened. */
export const PHOTO_RETENTION: PhotoRetention = { maxAgeMs: 30 * 24 * 3_600_000, perDevice: 50 };

/** Photos named per statement: well inside both stores' bound-parameter limits. */
const CHUNK = 500;

/** Deletes the bytes of these photos, keeping each row as the record that it was taken and when it went. */
async function prune(trx: Tx, commandIds: readonly string[], now: Date): Promise<number> {
  let pruned = 0;
  for (let i = 0; i < commandIds.length; i += CHUNK) {
    const res = await trx
      .updateTable("photos")
      .set({ bytes: "", pruned_at: now.toISOString() })
      .where("command_id", "in", commandIds.slice(i, i + CHUNK))
      .where("pruned_at", "is", null)
      .executeTakeFirst();
    pruned += Number(res.numUpdatedRows);
  }
  return pruned;
}

/** Keeps a device's newest `perDevice` photos (by arrival) and prunes the rest. */
export async function keepNewestPhotos(
  trx: Tx,
  deviceId: string,
  now: Date,
  retention: PhotoRetention = PHOTO_RETENTION,
): Promise<number> {
  const kept = await trx
    .selectFrom("photos")
    .select("command_id")
    .where("device_id", "=", deviceId)
    .where("pruned_at", "is", null)
    .orderBy("received_at", "desc")
    .orderBy("command_id", "desc")
    .execute();
  return prune(
    trx,
    kept.slice(retention.perDevice).map((p) => p.command_id),
    now,
  );
}

/**
 * One retention round: photos older than `maxAgeMs` are pruned, devices over `perDevice` trimmed, and parts
 * of photos that never became whole in that time deleted. Idempotent, so replicas may run it side by side.
 */
export async function applyPhotoRetention(
  db: Db,
  now: Date,
  retention: PhotoRetention = PHOTO_RETENTION,
): Promise<{ pruned: number; parts: number }> {
  const cutoff = new Date(now.getTime() - retention.maxAgeMs).toISOString();
  const old = await db
    .selectFrom("photos")
    .select("command_id")
    .where("pruned_at", "is", null)
    .where("received_at", "<=", cutoff)
    .execute();
  let pruned = await prune(
    db,
    old.map((p) => p.command_id),
    now,
  );
  const crowded = await db
    .selectFrom("photos")
    .select("device_id")
    .where("pruned_at", "is", null)
    .groupBy("device_id")
    .having((eb) => eb.fn.countAll(), ">", retention.perDevice)
    .execute();
  for (const { device_id } of crowded) pruned += await keepNewestPhotos(db, device_id, now, retention);
  const parts = await db.deleteFrom("photo_parts").where("received_at", "<=", cutoff).executeTakeFirst();
  return { pruned, parts: Number(parts.numDeletedRows) };
}

/** Runs the retention every `everyMs` (an hour) on the injected clock. */
export function createPhotoPruner(deps: {
  db: Db;
  clock: Clock;
  log: Logger;
  everyMs?: number;
  retention?: PhotoRetention;
}) {
  const { db, clock, log } = deps;
  async function round() {
    const done = await applyPhotoRetention(db, clock.now(), deps.retention);
    if (done.pruned > 0 || done.parts > 0) log.info(done, "photos past their retention deleted");
    return done;
  }
  const rounds = every(clock, deps.everyMs ?? 3_600_000, round, (err) =>
    log.error({ err }, "photo retention failed"),
  );
  return { round, start: rounds.start, stop: rounds.stop };
}
