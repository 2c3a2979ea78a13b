import { AppError } from "../../shared/api/errors.ts";
import type { Permission } from "../../shared/api/permissions.ts";
import { type StaffAction, staffMay } from "../../shared/domain/staff-roles.ts";
import type { StaffPrincipal } from "../auth/principal.ts";
import type { SignedIn } from "../staff/console-sessions.ts";

/** What a staff member who may act holds of the operator back end's permissions: the operator functions. */
const ACTING: ReadonlySet<Permission> = new Set<Permission>(["DEVICE_ADMIN"]);
const READING: ReadonlySet<Permission> = new Set<Permission>();

/**
 * The principal a console request acts as on `operatorId`'s data, so the console goes through the
 * services and rules of the public API. `operatorId` is the staff member's own, or for a superadmin the
 * operator of what it asks about. A role that may not do `action` is refused (403) before anything runs.
 */
export function staffPrincipal(session: SignedIn, operatorId: string, action: StaffAction): StaffPrincipal {
  const { staff } = session;
  const scope = { role: staff.role, operatorId: staff.operatorId };
  if (!staffMay(scope, action, operatorId))
    throw new AppError("ERRORS.FORBIDDEN", `The ${staff.role} role may not do this`);
  const permissions = staffMay(scope, "act", operatorId) ? ACTING : READING;
  return { kind: "staff", id: staff.id, operatorId, permissions };
}

/** A staff member whose role may never `action` is refused before anything is looked up. */
export function requireRole(session: SignedIn, action: StaffAction): void {
  const { role } = session.staff;
  // Asked as of no operator in particular: only the role counts here, ownership is asked per object.
  if (!staffMay({ role, operatorId: null }, action, ""))
    throw new AppError("ERRORS.FORBIDDEN", `The ${role} role may not do this`);
}
