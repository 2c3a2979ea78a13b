/**
 * What each console role may do, as one pure rule the console's services ask (docs/decisions/console.md).
 * A `viewer` reads everything of its operator, an `operator` also acts (force commands, session ends,
 * alarms, cards, access lists, webhook replays), an `admin` also manages staff. A staff member without an
 * operator is a superadmin: its role holds for every operator.
 */
export const STAFF_ROLES = ["viewer", "operator", "admin"] as const;
export type StaffRole = (typeof STAFF_ROLES)[number];

export const STAFF_ACTIONS = ["read", "act", "manage_staff"] as const;
export type StaffAction = (typeof STAFF_ACTIONS)[number];

/** Who asks: a role, and the operator it belongs to (null: a superadmin). */
export type StaffScope = { role: StaffRole; operatorId: string | null };

/** The least role each action needs; each role may do all its lesser roles may. */
const NEEDS: Record<StaffAction, StaffRole> = { read: "viewer", act: "operator", manage_staff: "admin" };

const rank = (role: StaffRole) => STAFF_ROLES.indexOf(role);

/** Whether `staff` may do `action` on what belongs to `operatorId`. */
export function staffMay(staff: StaffScope, action: StaffAction, operatorId: string): boolean {
  const ownsIt = staff.operatorId === null || staff.operatorId === operatorId;
  return ownsIt && rank(staff.role) >= rank(NEEDS[action]);
}

/** The operators whose data `staff` reads: every one for a superadmin, else its own. */
export function operatorsSeenBy(staff: StaffScope): "all" | string[] {
  return staff.operatorId === null ? "all" : [staff.operatorId];
}
