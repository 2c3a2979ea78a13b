import type { LightMyRequestResponse } from "fastify";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { listAudit } from "../../cloud/audit/audit-log.ts";
import type { Command } from "../../shared/api/command.ts";
import type { StaffRole } from "../../shared/domain/staff-roles.ts";
import { type CloudHarness, startCloudHarness } from "../support/cloud-harness.ts";
import { type ConsoleStaff, consoleRequests, signedInStaff } from "../support/console-api.ts";
import { CLIENTS, fx, OP_A, OP_B } from "../support/fixture-site.ts";
import { type GatewayReports, gatewayReports } from "../support/gateway-reports.ts";

/**
 * The console's device page and its operator functions: the public command service's rules, acting as the
 * signed-in staff member (the audit log names them), closed to a viewer and to another operator's devices.
 */

const LOCKER = fx.device("L1", "1");

let h: CloudHarness;
let gw: GatewayReports;
const staff: Partial<Record<string, ConsoleStaff>> = {};

const signIn = (email: string, role: StaffRole, operatorId: string | null) =>
  signedInStaff(h, email, role, operatorId);

const as = (who: string): ConsoleStaff => {
  const s = staff[who];
  if (!s) throw new Error(`${who} is not signed in`);
  return s;
};

const requests = consoleRequests(() => h);
const consoleGet = (who: string, url: string, headers: Record<string, string> = {}) =>
  requests.get(as(who), url, headers);

const act = (who: string, deviceId: string, payload: Record<string, unknown>) =>
  requests.post(as(who), `/console/api/devices/${deviceId}/commands`, payload);

function expectStatus(res: LightMyRequestResponse, status: number) {
  expect(res.statusCode, res.body).toBe(status);
}

/** The locker, force-locked by the integrator and reported LOCKED, with the throttle window passed. */
async function lockedLocker() {
  const res = await h.call(CLIENTS.admin, {
    method: "POST",
    url: `/device/v1/devices/${LOCKER}/commands`,
    payload: { command: "force-lock" },
  });
  expectStatus(res, 200);
  await gw.progress("gw-a1", res.json<Command>(), "SUCCESS", { lock_state: "LOCKED" });
  h.clock.advance(20_000);
}

const deviceState = async (who = "operator") =>
  (await consoleGet(who, `/console/api/devices/${LOCKER}`)).json<{ device: { state: { value: string } } }>()
    .device.state.value;

beforeEach(async () => {
  h = await startCloudHarness();
  gw = gatewayReports(() => h);
  staff.viewer = await signIn("viewer@a.example", "viewer", OP_A);
  staff.operator = await signIn("operator@a.example", "operator", OP_A);
  staff.superadmin = await signIn("root@example.com", "operator", null);
  staff.otherOperator = await signIn("operator@b.example", "operator", OP_B);
});
afterEach(() => h.close());

describe("the console's device page", () => {
  it("shows the live state and one timeline of commands, who forced it and why, newest first", async () => {
    await lockedLocker();
    const res = await consoleGet("viewer", `/console/api/devices/${LOCKER}`);
    expectStatus(res, 200);
    expect(res.headers["cache-control"]).toBe("no-store");
    const page = res.json<{ device: { id: string; state: { value: string } }; timeline: unknown[] }>();
    expect(page.device).toMatchObject({ id: LOCKER, state: { value: "LOCKED" } });
    expect(page.timeline).toEqual([
      expect.objectContaining({
        kind: "command",
        name: "force-lock",
        state: { value: "SUCCESS", reason: expect.any(String) },
        requested_by: CLIENTS.admin,
        events: expect.arrayContaining([expect.objectContaining({ name: "RESPONSE_DEVICE_LOCKED" })]),
      }),
      expect.objectContaining({
        kind: "audit",
        actor: { kind: "api_client", id: CLIENTS.admin },
        action: "command.force-lock",
      }),
    ]);
  });

  it("keeps another operator's device as missing as one that does not exist; a superadmin sees it", async () => {
    expectStatus(await consoleGet("otherOperator", `/console/api/devices/${LOCKER}`), 404);
    expectStatus(await consoleGet("superadmin", `/console/api/devices/${LOCKER}`), 200);
  });

  it("answers 401 without a session", async () => {
    expectStatus(await h.app.inject({ method: "GET", url: `/console/api/devices/${LOCKER}` }), 401);
  });
});

describe("the console's operator functions", () => {
  it("force-unlock runs as the staff member: the audit log names them, the command is followed to its end", async () => {
    await lockedLocker();
    const res = await act("operator", LOCKER, { command: "force-unlock", reason: "LOCKED_EMPTY" });
    expectStatus(res, 200);
    const cmd = res.json<Command>();
    expect(cmd).toMatchObject({ name: "force-unlock", state: { value: "SENT" } });
    expect(h.gateways.last().request).toMatchObject({ command_id: cmd.id, device_id: LOCKER });
    await gw.progress("gw-a1", cmd, "SUCCESS", { lock_state: "UNLOCKED" });
    const followed = await consoleGet("operator", `/console/api/commands/${cmd.id}`);
    expect(followed.json<Command>().state.value).toBe("SUCCESS");
    expect(await deviceState()).toBe("UNLOCKED");
    const page = await consoleGet("viewer", `/console/api/devices/${LOCKER}`);
    expect(page.json<{ timeline: unknown[] }>().timeline).toContainEqual(
      expect.objectContaining({
        kind: "audit",
        actor: { kind: "staff", id: as("operator").id, email: "operator@a.example" },
        reason: "LOCKED_EMPTY",
      }),
    );
    const [entry] = (await listAudit(h.db, OP_A, { action: "command.force-unlock" })).data;
    expect(entry).toMatchObject({
      actor: { kind: "staff", id: as("operator").id },
      subject: { type: "device", id: LOCKER },
      reason: "LOCKED_EMPTY",
      correlation_id: res.headers["x-correlation-id"],
    });
  });

  it("follows a command with Prefer: wait as the public GET does", async () => {
    await lockedLocker();
    const cmd = (
      await act("operator", LOCKER, { command: "force-unlock", reason: "TESTING" })
    ).json<Command>();
    const waited = consoleGet("operator", `/console/api/commands/${cmd.id}`, { prefer: "wait=5" });
    await gw.progress("gw-a1", cmd, "SUCCESS", { lock_state: "UNLOCKED" });
    const res = await waited;
    expect(res.headers["preference-applied"]).toBe("wait=5");
    expect(res.json<Command>().state.value).toBe("SUCCESS");
  });

  it("holds the public API's rules: the spec's reasons and comments, the throttle, force supersession", async () => {
    const noReason = await act("operator", LOCKER, { command: "force-unlock" });
    expectStatus(noReason, 400);
    const noComment = await act("operator", LOCKER, { command: "force-unlock", reason: "OTHER" });
    expectStatus(noComment, 400);
    expect(noComment.json()).toMatchObject({ error_code: "ERRORS.VALIDATION_FAILED" });
    expectStatus(await act("operator", LOCKER, { command: "force-lock", reason: "OTHER" }), 400);
    const first = await act("operator", LOCKER, { command: "force-lock" });
    expectStatus(first, 200);
    const throttled = await act("operator", LOCKER, { command: "force-unlock", reason: "MAINTENANCE" });
    expectStatus(throttled, 429);
    expect(throttled.headers["retry-after"]).toBeDefined();
    h.clock.advance(20_000);
    const second = await act("operator", LOCKER, {
      command: "force-unlock",
      reason: "OTHER",
      comment: "latch jammed by a pannier",
    });
    expectStatus(second, 200);
    const superseded = await consoleGet("operator", `/console/api/commands/${first.json<Command>().id}`);
    expect(superseded.json<Command>().events.at(-1)?.name).toBe("REQUEST_SUPERSEDED");
    expectStatus(await act("operator", LOCKER, { command: "unlock" }), 400);
  });

  it("sync-device takes the power-cycle choice to the gateway", async () => {
    expectStatus(await act("operator", LOCKER, { command: "sync-device", power_cycle: true }), 200);
    expect(h.gateways.last().request).toMatchObject({ device_id: LOCKER });
  });

  it("refuses a viewer with 403 and changes nothing", async () => {
    await lockedLocker();
    const published = h.gateways.commands.length;
    const auditBefore = (await listAudit(h.db, OP_A, {})).data.length;
    const res = await act("viewer", LOCKER, { command: "force-unlock", reason: "LOCKED_EMPTY" });
    expectStatus(res, 403);
    expect(res.json()).toMatchObject({ error_code: "ERRORS.FORBIDDEN" });
    expect(h.gateways.commands.length).toBe(published);
    expect((await listAudit(h.db, OP_A, {})).data.length).toBe(auditBefore);
    expect(await deviceState()).toBe("LOCKED");
  });

  it("keeps another operator's device and command out of reach", async () => {
    const res = await act("otherOperator", LOCKER, { command: "force-lock" });
    expectStatus(res, 404);
    expect(h.gateways.commands.length).toBe(0);
    const cmd = (await act("operator", LOCKER, { command: "force-lock" })).json<Command>();
    expectStatus(await consoleGet("otherOperator", `/console/api/commands/${cmd.id}`), 404);
    expectStatus(await consoleGet("superadmin", `/console/api/commands/${cmd.id}`), 200);
  });

  it("refuses a change without the session's CSRF token", async () => {
    const res = await h.app.inject({
      method: "POST",
      url: `/console/api/devices/${LOCKER}/commands`,
      cookies: { console_session: as("operator").cookie },
      payload: { command: "force-lock" },
    });
    expectStatus(res, 403);
    expect(h.gateways.commands.length).toBe(0);
  });
});
