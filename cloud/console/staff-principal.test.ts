import { describe, expect, it } from "vitest";
import { AppError } from "../../shared/api/errors.ts";
import type { StaffRole } from "../../shared/domain/staff-roles.ts";
import type { SignedIn } from "../staff/console-sessions.ts";
import { requireRole, staffPrincipal } from "./staff-principal.ts";

const OP = "op-a";
const signedIn = (role: StaffRole, operatorId: string | null = OP): SignedIn => ({
  sessionId: "s",
  csrfToken: "t",
  staff: { id: `${role}-1`, email: `${role}@a.example`, role, operatorId },
});

const refused = (f: () => unknown) => {
  try {
    f();
  } catch (err) {
    return err instanceof AppError ? err.code : String(err);
  }
  return "allowed";
};

describe("the staff principal", () => {
  it("gives a staff member who may act the operator functions of its own operator, a viewer none", () => {
    expect(staffPrincipal(signedIn("operator"), OP, "act")).toEqual({
      kind: "staff",
      id: "operator-1",
      operatorId: OP,
      permissions: new Set(["DEVICE_ADMIN"]),
    });
    expect(staffPrincipal(signedIn("admin"), OP, "act").permissions.has("DEVICE_ADMIN")).toBe(true);
    expect(staffPrincipal(signedIn("viewer"), OP, "read").permissions.size).toBe(0);
  });

  it("refuses a viewer's action, and another operator's data, with 403", () => {
    expect(refused(() => staffPrincipal(signedIn("viewer"), OP, "act"))).toBe("ERRORS.FORBIDDEN");
    expect(refused(() => requireRole(signedIn("viewer"), "act"))).toBe("ERRORS.FORBIDDEN");
    expect(refused(() => requireRole(signedIn("operator"), "act"))).toBe("allowed");
    expect(refused(() => staffPrincipal(signedIn("operator"), "op-b", "read"))).toBe("ERRORS.FORBIDDEN");
  });

  it("lets a superadmin act on any operator", () => {
    expect(staffPrincipal(signedIn("operator", null), "op-b", "act").operatorId).toBe("op-b");
  });
});
