import { AppError } from "../../shared/api/errors.ts";
import { AddTargetItem, RemoveTargetItem } from "../../shared/api/whitelist.ts";
import type { TargetType } from "../../shared/domain/whitelist-entity.ts";
import { whitelistChanged } from "../key-sync/whitelist-changed.ts";
import type { Db } from "../store/db.ts";
import type { BatchSteps } from "./run-batch.ts";
import { whitelistRepository } from "./whitelist-repository.ts";

/**
 * Target modification (spec: Whitelist), one item at a time. A target change can move every card of the
 * list, so key sync hears of "all" of it, in the item's transaction.
 */

const invalidCode: BatchSteps<unknown>["invalidCode"] = () => "ERRORS.VALIDATION_FAILED";

/** The target must be the operator's own; another operator's answers like a missing one. */
async function assertOwned(trx: Db, operatorId: string, type: TargetType, id: string) {
  if (!(await whitelistRepository(trx).isOperatorsTarget(operatorId, type, id)))
    throw new AppError("ERRORS.UNKNOWN_TARGET", `id: no ${type} of this operator has this id`);
}

/**
 * The whitelists targeting the device directly, checked with the device's row locked, so two lists added
 * at once on PostgreSQL cannot both take the last place. Location targets do not count
 * (docs/decisions/whitelists.md).
 */
async function assertRoomOnDevice(trx: Db, deviceId: string, max: number) {
  const n = await whitelistRepository(trx).holdDeviceCountingLists(deviceId);
  if (n >= max)
    throw new AppError(
      "ERRORS.WHITELIST_LIMIT_REACHED",
      `id: the device already has ${n} whitelists, the most a device can have (${max}); remove one first`,
      { limit: max },
    );
}

/** ADD: a new target (within the device's limit), or new keys_only for one already there. */
export function addTarget(
  whitelistId: string,
  operatorId: string,
  now: Date,
  maxPerDevice: number,
): BatchSteps<AddTargetItem> {
  return {
    schema: AddTargetItem,
    invalidCode,
    async apply(trx, t) {
      const type = (t.type ?? t.id_type) as TargetType;
      const keysOnly = t.keys_only === false ? 0 : 1;
      await assertOwned(trx, operatorId, type, t.id);
      const lists = whitelistRepository(trx);
      const key = { whitelistId, type, id: t.id };
      const existing = await lists.findTarget(key);
      if (existing?.keys_only === keysOnly) return [];
      if (existing) await lists.setKeysOnly(key, keysOnly);
      else {
        if (type === "device") await assertRoomOnDevice(trx, t.id, maxPerDevice);
        await lists.insertTarget(key, keysOnly, now.toISOString());
      }
      return whitelistChanged(trx, { whitelistId, cardIds: "all" }, now);
    },
  };
}

/** REMOVE needs only id and type; a target that is not there is removed already (the item succeeds). */
export function removeTarget(whitelistId: string, now: Date): BatchSteps<RemoveTargetItem> {
  return {
    schema: RemoveTargetItem,
    invalidCode,
    async apply(trx, t) {
      const key = { whitelistId, type: (t.type ?? t.id_type) as TargetType, id: t.id };
      if (!(await whitelistRepository(trx).removeTarget(key))) return [];
      return whitelistChanged(trx, { whitelistId, cardIds: "all" }, now);
    },
  };
}
