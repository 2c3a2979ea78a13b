import { AddEntityItem, RemoveEntityItem } from "../../shared/api/whitelist.ts";
import { whitelistChanged } from "../key-sync/whitelist-changed.ts";
import type { BatchSteps } from "./run-batch.ts";

/**
 * Entity modification (spec: Whitelist), one item at a time; each change is recorded for key sync in the
 * item's transaction (cloud/key-sync/whitelist-changed.ts).
 */

/** A bad card id has its own code, so an integrator can tell it from other problems of the item. */
const invalidCode: BatchSteps<unknown>["invalidCode"] = (issues) =>
  issues.some((i) => i.path[0] === "id") ? "ERRORS.INVALID_CARD_ID" : "ERRORS.VALIDATION_FAILED";

/** ADD writes the card's whole record, replacing one already in the list (upsert; created_at stays). */
export function addEntity(whitelistId: string, now: Date): BatchSteps<AddEntityItem> {
  const at = now.toISOString();
  return {
    schema: AddEntityItem,
    invalidCode,
    async apply(trx, e) {
      const record = {
        status: e.status ?? "ACTIVE",
        expires_at: e.expires_at ? new Date(e.expires_at).toISOString() : null,
        is_master_key: e.is_master_key ? 1 : 0,
        comment: e.comment ?? "",
        updated_at: at,
      };
      await trx
        .insertInto("whitelist_entities")
        .values({ whitelist_id: whitelistId, card_id: e.id, created_at: at, ...record })
        .onConflict((oc) => oc.columns(["whitelist_id", "card_id"]).doUpdateSet(record))
        .execute();
      return whitelistChanged(trx, { whitelistId, cardIds: [e.id] }, now);
    },
  };
}

/**
 * REMOVE needs only id and id_type. A card that is not in the list is removed already: the item succeeds
 * with nothing to do, so a retried batch does not fail on what its first attempt did.
 */
export function removeEntity(whitelistId: string, now: Date): BatchSteps<{ id: string }> {
  return {
    schema: RemoveEntityItem,
    invalidCode,
    async apply(trx, e) {
      const { numDeletedRows } = await trx
        .deleteFrom("whitelist_entities")
        .where("whitelist_id", "=", whitelistId)
        .where("card_id", "=", e.id)
        .executeTakeFirst();
      if (Number(numDeletedRows) === 0) return [];
      return whitelistChanged(trx, { whitelistId, cardIds: [e.id] }, now);
    },
  };
}
