import type { Logger } from "pino";
import type { Clock } from "../../shared/time/clock.ts";
import { every } from "../../shared/time/every.ts";
import type { Db, Executor } from "../store/db.ts";
import { photoRepository } from "./photo-repository.ts";

/** How long and how many take-photo photos are kept (docs/decisions/photos.md). */
export type PhotoRetention = {
  /** A photo is deleted this long after it arrived; parts of one that never became whole too. */
  maxAgeMs: number;
  /** At most this many photos per device: a new one deletes the oldest past it. */
  perDevice: number;
};

/** 30 days and 50 per device: a few photos a day per site, looked at when something happened. */
export const PHOTO_RETENTION: PhotoRetention = { maxAgeMs: 30 * 24 * 3_600_000, perDevice: 50 };

/** Keeps a device's newest `perDevice` photos (by arrival) and prunes the rest. */
export async function keepNewestPhotos(
  trx: Executor,
  deviceId: string,
  now: Date,
  retention: PhotoRetention = PHOTO_RETENTION,
): Promise<number> {
  const photos = photoRepository(trx);
  const kept = await photos.keptOf(deviceId);
  return photos.prune(kept.slice(retention.perDevice), now.toISOString());
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
  const photos = photoRepository(db);
  let pruned = await photos.prune(await photos.keptReceivedBy(cutoff), now.toISOString());
  for (const deviceId of await photos.devicesKeepingMoreThan(retention.perDevice))
    pruned += await keepNewestPhotos(db, deviceId, now, retention);
  const parts = await photos.dropPartsReceivedBy(cutoff);
  return { pruned, parts };
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
