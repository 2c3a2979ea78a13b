import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { issueRefreshToken } from "../../cloud/users/refresh-tokens.ts";
import { ConsoleAuditPage } from "../../shared/api/console-audit.ts";
import { ConsoleRider } from "../../shared/api/console-riders.ts";
import { type CloudHarness, startCloudHarness } from "../support/cloud-harness.ts";
import {
  type ConsoleStaff,
  consoleRequests,
  expectError,
  type StaffCast,
  signedInCast,
} from "../support/console-api.ts";
import { fx, OP_A, OP_B } from "../support/fixture-site.ts";
import { type Caller, type RiderFlow, rider, riderFlow } from "../support/rider-sessions.ts";

const HOUR = 3_600_000;

let h: CloudHarness;
let f: RiderFlow;
let alice: Caller;
let bea: Caller;
let staff: StaffCast;

beforeEach(async () => {
  h = await startCloudHarness({ console: { idleTimeoutMs: 24 * HOUR } });
  f = riderFlow(h);
  alice = await rider(h, OP_A, "alice");
  bea = await rider(h, OP_B, "bea");
  staff = await signedInCast(h, "operator");
});
afterEach(() => h.close());

const { get, post } = consoleRequests(() => h);

const revoke = (who: ConsoleStaff, id: string, payload: unknown) =>
  post(who, `/console/api/riders/${id}/revoke-tokens`, payload);

async function riderOf(who: ConsoleStaff, id: string): Promise<ConsoleRider> {
  const res = await get(who, `/console/api/riders/${id}`);
  expect(res.statusCode, res.body).toBe(200);
  return ConsoleRider.parse(res.json());
}

/** What a rider's app holds: an access token of now and a refresh token. */
async function appOf(who: Caller, operatorId: string) {
  return {
    access: await who.token(),
    refresh: await issueRefreshToken(h.db, { id: who.id, operatorId }, h.clock.now()),
  };
}

const ownSessions = (token: string) =>
  h.app.inject({ method: "GET", url: "/session/v2/sessions", headers: { authorization: `Bearer ${token}` } });

const refresh = (who: Caller, refreshToken: string) =>
  h.app.inject({
    method: "POST",
    url: "/external-users-auth/v1/refresh",
    payload: { service_user_id: who.id, refresh_token: refreshToken },
  });

describe("the console's riders", () => {
  it("shows a rider by the service's id: as stored, with sessions and live tokens, never a token itself", async () => {
    const app = await appOf(alice, OP_A);
    await f.lock(alice, fx.device("L1", "2"));
    const seen = await riderOf(staff.viewer, alice.id);
    expect(seen).toMatchObject({ id: alice.id, user_id: "alice", operator_id: OP_A, status: "verified" });
    expect(seen.sessions.map((s) => [s.status, s.device_id, s.user_id])).toEqual([
      ["active", fx.device("L1", "2"), alice.id],
    ]);
    expect(seen.tokens).toHaveLength(1);
    expect(JSON.stringify(seen)).not.toContain(app.refresh);
    // The superadmin finds any operator's rider without naming the operator.
    expect((await riderOf(staff.superadmin, bea.id)).operator_id).toBe(OP_B);
  });

  it("answers 404 for another operator's rider and for an id that names none, acting on it changes nothing", async () => {
    const app = await appOf(bea, OP_B);
    expectError(await get(staff.viewer, `/console/api/riders/${bea.id}`), 404, "ERRORS.NOT_FOUND");
    expectError(await revoke(staff.operator, bea.id, { reason: "x" }), 404, "ERRORS.NOT_FOUND");
    const none = await get(staff.viewer, "/console/api/riders/00000000-0000-4000-8000-00000000abcd");
    expectError(none, 404, "ERRORS.NOT_FOUND");
    expect(none.json().error_message).toContain("No rider with id 00000000-0000-4000-8000-00000000abcd");
    expect((await ownSessions(app.access)).statusCode).toBe(200);
    expect((await refresh(bea, app.refresh)).statusCode).toBe(200);
  });

  it("revokes a rider's refresh and access tokens: the public API refuses both afterwards, audited", async () => {
    const app = await appOf(alice, OP_A);
    expect((await ownSessions(app.access)).statusCode).toBe(200);
    const res = await revoke(staff.operator, alice.id, { reason: "phone reported stolen" });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ rider_id: alice.id, refresh_tokens_revoked: 1 });

    expectError(await ownSessions(app.access), 401, "ERRORS.INVALID_TOKEN");
    expectError(await refresh(alice, app.refresh), 400, "ERRORS.AUTHENTICATION_FAILED");
    expect((await riderOf(staff.viewer, alice.id)).tokens).toEqual([]);

    // A new sign-in is of the new generation and works.
    const again = await h.app.inject({
      method: "POST",
      url: "/external-users-auth/v1/refresh",
      payload: {
        service_user_id: alice.id,
        refresh_token: await issueRefreshToken(h.db, { id: alice.id, operatorId: OP_A }, h.clock.now()),
      },
    });
    expect(again.statusCode, again.body).toBe(200);
    expect((await ownSessions(again.json().access_token)).statusCode).toBe(200);

    const log = await get(staff.viewer, `/console/api/audit?subject_type=rider&subject_id=${alice.id}`);
    const entries = ConsoleAuditPage.parse(log.json()).data;
    expect(entries).toHaveLength(1);
    expect(entries[0]).toMatchObject({
      action: "rider.revoke_tokens",
      reason: "phone reported stolen",
      actor: { kind: "staff", name: "operator@a.example" },
    });
  });

  it("refuses a viewer's revoke with 403 and bad input in the spec's error body; nothing changes", async () => {
    const app = await appOf(alice, OP_A);
    expectError(await revoke(staff.viewer, alice.id, { reason: "x" }), 403, "ERRORS.FORBIDDEN");
    for (const bad of [{}, { reason: "  " }, { reason: "x".repeat(2_001) }, { reason: "x", extra: 1 }]) {
      const res = await revoke(staff.operator, alice.id, bad);
      expect(res.statusCode, JSON.stringify(bad)).toBe(400);
      expect(res.json()).toMatchObject({ status_code: 400, error_code: expect.stringMatching(/^ERRORS\./) });
    }
    expect((await ownSessions(app.access)).statusCode).toBe(200);
    expect((await refresh(alice, app.refresh)).statusCode).toBe(200);
    expect((await riderOf(staff.viewer, alice.id)).tokens).toHaveLength(1);
    const log = await get(staff.viewer, `/console/api/audit?subject_type=rider&subject_id=${alice.id}`);
    expect(ConsoleAuditPage.parse(log.json()).data).toEqual([]);
  });
});
