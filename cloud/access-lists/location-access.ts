import type { CommandRequest } from "../../shared/api/command.ts";
import { grantsAccess, membershipStatus } from "../../shared/domain/membership.ts";
import { AppError } from "../../shared/errors.ts";
import type { Principal } from "../auth/principal.ts";
import type { Db } from "../store/db.ts";
import { membershipOf } from "./membership-rows.ts";

/**
 * Whose membership a command needs (docs/decisions.md, Access lists): lock and book only; the user a lock
 * names in user_id, else a rider's own token. An integrator's back end acting without a user is the
 * operator of its own site and is not checked (null).
 */
export function accessSubject(principal: Principal, body: CommandRequest): string | null {
  if (body.command !== "lock" && body.command !== "book") return null;
  if (body.command === "lock" && body.user_id !== undefined) return body.user_id;
  return principal.kind === "user" ? principal.id : null;
}

/**
 * At a location with access lists, only members with an included:* status of one of them may lock or
 * book: anyone else is refused with 403 ERRORS.ACCESS_DENIED. A location without lists is open.
 */
export async function checkLocationAccess(
  db: Db,
  principal: Principal,
  device: { location_id: string },
  body: CommandRequest,
  now: Date,
): Promise<void> {
  const subject = accessSubject(principal, body);
  if (subject === null) return;
  const lists = await db
    .selectFrom("access_lists")
    .select("id")
    .where("location_id", "=", device.location_id)
    .where("operator_id", "=", principal.operatorId)
    .where("retired_at", "is", null)
    .execute();
  if (lists.length === 0) return;
  const memberships = await db
    .selectFrom("access_list_members")
    .selectAll()
    .where("user_id", "=", subject)
    .where(
      "access_list_id",
      "in",
      lists.map((l) => l.id),
    )
    .execute();
  if (memberships.some((m) => grantsAccess(membershipStatus(membershipOf(m), now)))) return;
  throw new AppError(
    "ERRORS.ACCESS_DENIED",
    `Only members of this location's access lists may ${body.command} here`,
    { command: body.command },
  );
}
