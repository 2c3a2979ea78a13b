import { AddEntityItem, RemoveEntityItem } from "../../shared/api/whitelist.ts";
import { whitelistChanged } from "../key-sync/whitelist-changed.ts";
import type { BatchSteps } from "./run-batch.ts";
import { whitelistRepository } from "./whitelist-repository.ts";

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
      await whitelistRepository(trx).putEntity(whitelistId, e.id, record, at);
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
      if (!(await whitelistRepository(trx).removeEntity(whitelistId, e.id))) return [];
      return whitelistChanged(trx, { whitelistId, cardIds: [e.id] }, now);
    },
  };
}
