import { grantsAccess, membershipStatus } from "../../shared/domain/membership.ts";
import type { Db } from "../store/db.ts";
import { accessListRepository } from "./access-list-repository.ts";
import { membershipOf } from "./membership-rows.ts";

/**
 * Whether a rider may use a location's devices (docs/decisions/access-lists.md): at a location with access
 * lists in force, only a member with an included:* status of one of them; a location without lists is open.
 */
export async function hasLocationAccess(
  db: Db,
  at: { operatorId: string; locationId: string; userId: string; now: Date },
): Promise<boolean> {
  const repo = accessListRepository(db);
  const lists = await repo.liveIdsAt(at.operatorId, at.locationId);
  if (lists.length === 0) return true;
  const memberships = await repo.membershipsOf(at.userId, lists);
  return memberships.some((m) => grantsAccess(membershipStatus(membershipOf(m), at.now)));
}
