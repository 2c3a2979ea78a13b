import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  operatorsSeenBy,
  STAFF_ACTIONS,
  STAFF_ROLES,
  type StaffAction,
  type StaffRole,
  staffMay,
} from "./staff-roles.ts";

const role = fc.constantFrom(...STAFF_ROLES);
const action = fc.constantFrom(...STAFF_ACTIONS);
const operator = fc.uuid();
const scope = fc.record({ role, operatorId: fc.option(operator, { nil: null }) });

/** What each role may do, spelt out once: the rule must agree with this table. */
const TABLE: Record<StaffRole, StaffAction[]> = {
  viewer: ["read"],
  operator: ["read", "act"],
  admin: ["read", "act", "manage_staff"],
};

describe("staffMay", () => {
  it("on its own operator, a role may do exactly what the table lists", () => {
    fc.assert(
      fc.property(role, action, operator, (r, a, op) => {
        expect(staffMay({ role: r, operatorId: op }, a, op)).toBe(TABLE[r].includes(a));
      }),
    );
  });

  it("nothing of another operator, whatever the role", () => {
    fc.assert(
      fc.property(role, action, operator, operator, (r, a, own, other) => {
        fc.pre(own !== other);
        expect(staffMay({ role: r, operatorId: own }, a, other)).toBe(false);
      }),
    );
  });

  it("a superadmin's role holds for every operator", () => {
    fc.assert(
      fc.property(role, action, operator, (r, a, op) => {
        expect(staffMay({ role: r, operatorId: null }, a, op)).toBe(TABLE[r].includes(a));
      }),
    );
  });

  it("a higher role may do all a lower one may (viewer < operator < admin)", () => {
    fc.assert(
      fc.property(scope, role, action, operator, (s, other, a, op) => {
        const higher = STAFF_ROLES.indexOf(other) >= STAFF_ROLES.indexOf(s.role);
        if (higher && staffMay(s, a, op)) expect(staffMay({ ...s, role: other }, a, op)).toBe(true);
      }),
    );
  });

  it("whoever may act or manage staff may read", () => {
    fc.assert(
      fc.property(scope, action, operator, (s, a, op) => {
        if (staffMay(s, a, op)) expect(staffMay(s, "read", op)).toBe(true);
      }),
    );
  });
});

describe("operatorsSeenBy", () => {
  it("is every operator for a superadmin, else its own only", () => {
    fc.assert(
      fc.property(scope, (s) => {
        expect(operatorsSeenBy(s)).toEqual(s.operatorId === null ? "all" : [s.operatorId]);
      }),
    );
  });
});
