import { grantsAccess, membershipStatus } from "../../shared/domain/membership.ts";
import type { Db } from "../store/db.ts";
import { membershipOf } from "./membership-rows.ts";

/**
 * Whether a rider may use a location's devices (docs/decisions/access-lists.md): at a location with access
 * lists in force, only a member with an included:* status of one of them; a location without lists is open.
 */
export async function hasLocationAccess(
  db: Db,
  at: { operatorId: string; locationId: string; userId: string; now: Date },
): Promise<boolean> {
  const lists = await db
    .selectFrom("access_lists")
    .select("id")
    .where("location_id", "=", at.locationId)
    .where("operator_id", "=", at.operatorId)
    .where("retired_at", "is", null)
    .execute();
  if (lists.length === 0) return true;
  const memberships = await db
    .selectFrom("access_list_members")
    .selectAll()
    .where("user_id", "=", at.userId)
    .where(
      "access_list_id",
      "in",
      lists.map((l) => l.id),
    )
    .execute();
  return memberships.some((m) => grantsAccess(membershipStatus(membershipOf(m), at.now)));
}
