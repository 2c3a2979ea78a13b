import type { InjectOptions, LightMyRequestResponse } from "fastify";
import { expect } from "vitest";
import { createStaffService } from "../../cloud/staff/staff-service.ts";
import type { StaffRole } from "../../shared/domain/staff-roles.ts";
import type { CloudHarness } from "./cloud-harness.ts";
import { OP_A, OP_B } from "./fixture-site.ts";

/** Every console staff member's password in the suites. */
export const CONSOLE_PASSWORD = "a console password";

/** A signed-in staff member: their id, the console session's cookie token and its CSRF token. */
export type ConsoleStaff = { id: string; cookie: string; csrf: string };

/** A new staff member of the store `h` holds (`operatorId` null: a superadmin); returns their id. */
export async function createConsoleStaff(
  h: Parameters<typeof createStaffService>[0],
  email: string,
  role: StaffRole,
  operatorId: string | null,
): Promise<string> {
  // The least cost secrets.ts accepts, as the other suites that verify passwords.
  const service = createStaffService({ db: h.db, clock: h.clock, cost: { ln: 10, r: 8, p: 1 } });
  const made = await service.create({ email, role, operatorId, password: CONSOLE_PASSWORD });
  if (typeof made === "string") throw new Error(made);
  return made.id;
}

/** Signs an existing staff member in through the console API: the session cookie and the sign-in's body. */
export async function consoleSignIn(h: CloudHarness, email: string) {
  const res = await h.app.inject({
    method: "POST",
    url: "/console/api/session",
    payload: { email, password: CONSOLE_PASSWORD },
  });
  const cookie = res.cookies.find((c) => c.name === "console_session")?.value;
  if (res.statusCode !== 200 || !cookie) throw new Error(`no session: ${res.statusCode} ${res.body}`);
  const body = res.json<{ csrf_token: string; demo_panel: boolean }>();
  return { cookie, csrf: body.csrf_token, body };
}

/** A new staff member, signed in. */
export async function signedInStaff(
  h: CloudHarness,
  email: string,
  role: StaffRole,
  operatorId: string | null,
): Promise<ConsoleStaff> {
  const id = await createConsoleStaff(h, email, role, operatorId);
  const { cookie, csrf } = await consoleSignIn(h, email);
  return { id, cookie, csrf };
}

export type StaffCast = Record<"viewer" | "operator" | "otherOperator" | "superadmin", ConsoleStaff>;

/** The usual cast, signed in: operator A's viewer and operator, operator B's operator, and a superadmin. */
export async function signedInCast(
  h: CloudHarness,
  superadminRole: StaffRole = "viewer",
): Promise<StaffCast> {
  return {
    viewer: await signedInStaff(h, "viewer@a.example", "viewer", OP_A),
    operator: await signedInStaff(h, "operator@a.example", "operator", OP_A),
    otherOperator: await signedInStaff(h, "operator@b.example", "operator", OP_B),
    superadmin: await signedInStaff(h, "root@example.com", superadminRole, null),
  };
}

type Signed = Pick<ConsoleStaff, "cookie" | "csrf">;

/**
 * Requests to the console API as a signed-in staff member: a read with the session cookie, and a change with
 * the cookie and the CSRF token. `harness` is read at each call, as suites start a new one per test.
 */
export function consoleRequests(harness: () => CloudHarness) {
  return {
    get: (who: Signed, url: string, headers: Record<string, string> = {}) =>
      harness().app.inject({ method: "GET", url, cookies: { console_session: who.cookie }, headers }),
    post: (who: Signed, url: string, payload?: unknown, method: "POST" | "PATCH" | "DELETE" = "POST") =>
      harness().app.inject({
        method,
        url,
        ...(payload === undefined ? {} : { payload: payload as InjectOptions["payload"] }),
        cookies: { console_session: who.cookie },
        headers: { "x-csrf-token": who.csrf },
      }),
  };
}

/** The spec's error body, nothing more, with `status` and `code`. */
export function expectError(res: LightMyRequestResponse, status: number, code: string) {
  expect(res.statusCode, res.body).toBe(status);
  const body = res.json();
  expect(Object.keys(body).sort()).toEqual(["correlation_id", "error_code", "error_message", "status_code"]);
  expect(body).toMatchObject({ status_code: status, error_code: code });
}
