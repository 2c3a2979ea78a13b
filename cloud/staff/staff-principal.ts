import { AppError } from "../../shared/api/errors.ts";
import type { Permission } from "../../shared/api/permissions.ts";
import { type StaffAction, staffMay } from "../../shared/domain/staff-roles.ts";
import type { AuditOrigin } from "../audit/audit-log.ts";
import type { ClientPrincipal } from "../auth/principal.ts";
import type { SignedIn } from "./console-sessions.ts";

/**
 * A staff member as the services' principal (docs/decisions/console.md): the console is a client of the
 * same services as the public API, so it calls them as an operator's client would, within the one
 * operator it acts for. The staff role decides first (a viewer may read, not act); a staff member who may
 * act holds DEVICE_ADMIN, the operator functions' permission, so the services' own checks then hold as for any client.
 */

/** The operator a request acts for: a staff member's own; a superadmin names one (`operator_id`). */
export function operatorFor(signed: SignedIn, requested: string | undefined): string {
  const own = signed.staff.operatorId;
  if (own !== null) return own;
  if (!requested)
    throw new AppError("ERRORS.BAD_REQUEST", "A superadmin names the operator it acts for in operator_id");
  return requested;
}

/** The principal of `signed` acting for `operatorId` to `action`: 403 when its role may not. */
export function staffPrincipal(signed: SignedIn, operatorId: string, action: StaffAction): ClientPrincipal {
  if (!staffMay(signed.staff, action, operatorId))
    throw new AppError("ERRORS.FORBIDDEN", `A ${signed.staff.role} of the console may not do this`);
  const permissions: ReadonlySet<Permission> = new Set(action === "read" ? [] : ["DEVICE_ADMIN"]);
  return { kind: "client", id: signed.staff.id, operatorId, permissions };
}

/** The audit log's origin of a console request: the staff member, and the request's correlation id. */
export function staffOrigin(signed: SignedIn, correlationId?: string): AuditOrigin {
  return { actor: { kind: "staff", id: signed.staff.id }, ...(correlationId ? { correlationId } : {}) };
}
