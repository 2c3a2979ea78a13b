import type { LightMyRequestResponse } from "fastify";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { commandRepository } from "../../cloud/commands/command-repository.ts";
import { deviceRepository } from "../../cloud/devices/device-repository.ts";
import type { Command, CommandRequest } from "../../shared/api/command.ts";
import { ErrorBody } from "../../shared/api/common.ts";
import { Device } from "../../shared/api/device.ts";
import { type CloudHarness, startCloudHarness } from "../support/cloud-harness.ts";
import { fixtureDevices } from "../support/fixture-devices.ts";
import { CLIENTS, fx, OP_A, OP_B } from "../support/fixture-site.ts";
import { declareExternalUsers, manifestRiderId, riderToken } from "../support/riders.ts";

type Body = Partial<Record<keyof CommandRequest, unknown>> & Record<string, unknown>;

const LOCKER = fx.device("L1", "1");
const REMOTE_WAKEUP_LOCKER = fx.device("L1", "4");
const LOCAL_WAKEUP_LOCKER = fx.device("L1", "5");
const DOOR = fx.device("H1", "door");
const SESSIONLESS_DOCK = fx.device("D1", "3");
const RANDOM_ID = "7d0c2b6e-1f4a-4c3b-9e8d-5a6f7b8c9d01";

let h: CloudHarness;
let seq = 0;

/**
 * A fresh harness per test where tests change devices; one per describe where every test is a refusal
 * that is itself checked to leave no trace (keeps the PostgreSQL run short).
 */
function harnessPer(scope: "test" | "describe") {
  const [before, after] = scope === "test" ? [beforeEach, afterEach] : [beforeAll, afterAll];
  before(async () => {
    h = await startCloudHarness();
  });
  after(() => h.close());
}

const post = (deviceId: string, body: Body, as: string = CLIENTS.admin) =>
  h.call(as, { method: "POST", url: `/device/v1/devices/${deviceId}/commands`, payload: body });

async function getDevice(id: string): Promise<Device> {
  const res = await h.call(CLIENTS.admin, { method: "GET", url: `/device/v1/devices/${id}` });
  expect(res.statusCode).toBe(200);
  return Device.parse(res.json());
}

/** Sends a command that must be accepted and returns its record. */
async function accepted(deviceId: string, body: Body, as: string = CLIENTS.admin): Promise<Command> {
  const res = await post(deviceId, body, as);
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as Command;
}

/** Plays the gateway confirming a command. */
async function confirm(gatewayId: string, cmd: Command, lockState?: "LOCKED" | "UNLOCKED") {
  seq += 1;
  const result = await h.report(gatewayId, {
    type: "command_progress",
    gateway_id: gatewayId,
    seq,
    observed_at: h.clock.now().toISOString(),
    command_id: cmd.id,
    device_id: cmd.device.id,
    state: "SUCCESS",
    reason: "",
    ...(lockState ? { lock_state: lockState } : {}),
  });
  expect(result).toBe("applied");
}

/** Locks a locker through the gateway: the device ends LOCKED. */
async function lockThroughGateway(deviceId: string, gatewayId = "gw-a1") {
  const cmd = await accepted(deviceId, { command: "lock" });
  await confirm(gatewayId, cmd, "LOCKED");
  expect((await getDevice(deviceId)).state.value).toBe("LOCKED");
}

/** Books a locker through the gateway (it records the booking): the device ends BOOKED. */
async function bookThroughGateway(deviceId: string, body: Body = {}, as: string = CLIENTS.admin) {
  const cmd = await accepted(deviceId, { command: "book", ...body }, as);
  await confirm("gw-a1", cmd);
  expect((await getDevice(deviceId)).state.value).toBe("BOOKED");
  return cmd;
}

/** Everything a refused command could have touched: every device row, every command row, the wire. */
async function snapshot() {
  return {
    devices: await fixtureDevices(h.db),
    commands: [
      ...(await commandRepository(h.db).ofOperator(OP_A)),
      ...(await commandRepository(h.db).ofOperator(OP_B)),
    ],
    published: h.gateways.commands.length,
  };
}

function expectError(res: LightMyRequestResponse, status: number, code: string): ErrorBody {
  expect(res.statusCode, res.body).toBe(status);
  const body = ErrorBody.strict().parse(res.json());
  expect(body.status_code).toBe(status);
  expect(body.error_code).toBe(code);
  expect(body.correlation_id).toBe(res.headers["x-correlation-id"]);
  expect(body.error_message.length).toBeGreaterThan(0);
  return body;
}

/** Sends a request that must be refused, and checks it left no trace anywhere. */
async function refused(
  deviceId: string,
  body: Body,
  status: number,
  code: string,
  as: string = CLIENTS.admin,
): Promise<{ res: LightMyRequestResponse; error: ErrorBody }> {
  const before = await snapshot();
  const res = await post(deviceId, body, as);
  const error = expectError(res, status, code);
  expect(await snapshot()).toEqual(before);
  return { res, error };
}

describe("command request body", () => {
  harnessPer("describe");

  it.each([
    ["an unknown command name", "command", { command: "explode" }],
    ["a missing command", "command", {}],
    ["a timeout_at that is not RFC 3339", "timeout_at", { command: "book", timeout_at: "tomorrow" }],
    ["a power_cycle that is not a boolean", "power_cycle", { command: "sync-device", power_cycle: "yes" }],
  ])("refuses %s with 400 naming the %s field, and changes nothing", async (_label, field, body) => {
    const { error } = await refused(LOCKER, body, 400, "ERRORS.VALIDATION_FAILED");
    expect(error.error_message).toMatch(new RegExp(`\\b${field}\\b`));
  });

  it("refuses an unknown body field with 400 naming the field", async () => {
    const { error } = await refused(
      LOCKER,
      { command: "lock", colour: "red" },
      400,
      "ERRORS.VALIDATION_FAILED",
    );
    expect(error.error_message).toContain("colour");
  });

  it("refuses a body that is not JSON with 400", async () => {
    const before = await snapshot();
    const res = await h.call(CLIENTS.admin, {
      method: "POST",
      url: `/device/v1/devices/${LOCKER}/commands`,
      headers: { "content-type": "application/json" },
      payload: "{not json",
    });
    expectError(res, 400, "ERRORS.VALIDATION_FAILED");
    expect(await snapshot()).toEqual(before);
  });

  it("answers a device id that is not a uuid like an unknown device: 404, and sends nothing", async () => {
    const res = await post("locker-1", { command: "lock" });
    expectError(res, 404, "ERRORS.NOT_FOUND");
    expect(h.gateways.commands).toHaveLength(0);
  });

  it("answers 404 for a command to a device that does not exist", async () => {
    await refused(RANDOM_ID, { command: "lock" }, 404, "ERRORS.NOT_FOUND");
  });

  it.each([
    ["timeout_at", "lock", { timeout_at: "2026-01-15T11:00:00Z" }],
    ["power_cycle", "lock", { power_cycle: true }],
    ["reason", "lock", { reason: "MAINTENANCE" }],
    ["comment", "force-lock", { comment: "hello world" }],
    ["user_id", "unlock", { user_id: "someone-else" }],
    ["user_id", "book", { user_id: "someone-else" }],
    ["power_cycle", "force-unlock", { reason: "TESTING", power_cycle: true }],
    ["timeout_at", "sync-device", { timeout_at: "2026-01-15T11:00:00Z" }],
  ])(
    "refuses %s on %s (a field another command uses) with 400 naming the field",
    async (field, command, extra) => {
      const { error } = await refused(LOCKER, { command, ...extra }, 400, "ERRORS.VALIDATION_FAILED");
      expect(error.error_message).toContain(field);
    },
  );
});

describe("commands the device type does not accept", () => {
  harnessPer("describe");

  it.each([
    ["lock on a door", DOOR, "lock"],
    ["book on a door", DOOR, "book"],
    ["take-photo on a GUARD without a camera", fx.guard("gw-a2"), "take-photo"],
    ["lock on a GUARD", fx.guard("gw-a1"), "lock"],
    ["take-photo on a locker", LOCKER, "take-photo"],
    ["book on a DOCK_SESSIONLESS", SESSIONLESS_DOCK, "book"],
    ["cancel-booking on a DOCK_SESSIONLESS", SESSIONLESS_DOCK, "cancel-booking"],
    ["force-cancel-booking on a DOCK_SESSIONLESS", SESSIONLESS_DOCK, "force-cancel-booking"],
  ])("refuses %s with 400 ERRORS.COMMAND_NOT_SUPPORTED", async (_label, deviceId, command) => {
    const { error } = await refused(deviceId, { command }, 400, "ERRORS.COMMAND_NOT_SUPPORTED");
    expect(error.error_message).toContain(command);
  });
});

describe("commands the device's state does not allow", () => {
  harnessPer("test");

  it("refuses unlock on an UNLOCKED locker with 400 ERRORS.COMMAND_NOT_ALLOWED_IN_STATE", async () => {
    const { error } = await refused(
      LOCKER,
      { command: "unlock" },
      400,
      "ERRORS.COMMAND_NOT_ALLOWED_IN_STATE",
    );
    expect(error.error_message).toContain("UNLOCKED");
  });

  it("refuses cancel-booking on a locker that is not booked; force-cancel-booking bypasses the check", async () => {
    await refused(LOCKER, { command: "cancel-booking" }, 400, "ERRORS.COMMAND_NOT_ALLOWED_IN_STATE");
    const before = await getDevice(LOCKER);
    const forced = await accepted(LOCKER, { command: "force-cancel-booking" });
    expect(forced.state.value).toBe("SENT");
    await confirm("gw-a1", forced);
    expect((await getDevice(LOCKER)).state).toEqual(before.state);
  });

  it("refuses book on a locker that is already booked, or whose book is still in flight", async () => {
    await accepted(LOCKER, { command: "book" });
    await refused(LOCKER, { command: "book" }, 400, "ERRORS.COMMAND_NOT_ALLOWED_IN_STATE");
    await bookThroughGateway(REMOTE_WAKEUP_LOCKER);
    await refused(REMOTE_WAKEUP_LOCKER, { command: "book" }, 400, "ERRORS.COMMAND_NOT_ALLOWED_IN_STATE");
  });

  it("refuses lock and book on a LOCKED locker", async () => {
    await lockThroughGateway(LOCKER);
    h.clock.advance(3_000);
    await refused(LOCKER, { command: "lock" }, 400, "ERRORS.COMMAND_NOT_ALLOWED_IN_STATE");
    await refused(LOCKER, { command: "book" }, 400, "ERRORS.COMMAND_NOT_ALLOWED_IN_STATE");
  });

  it("refuses a second lock while the first is still in flight (device ALLOCATED)", async () => {
    await accepted(LOCKER, { command: "lock" });
    h.clock.advance(3_000);
    expect((await getDevice(LOCKER)).state.value).toBe("ALLOCATED");
    await refused(LOCKER, { command: "lock" }, 400, "ERRORS.COMMAND_NOT_ALLOWED_IN_STATE");
  });
});

describe("book and timeout_at", () => {
  harnessPer("test");

  it("refuses a timeout_at in the past with 400 ERRORS.INVALID_TIMEOUT_AT", async () => {
    const past = new Date(h.clock.now().getTime() - 1_000).toISOString();
    await refused(LOCKER, { command: "book", timeout_at: past }, 400, "ERRORS.INVALID_TIMEOUT_AT");
  });

  it("refuses a timeout_at equal to now with 400 ERRORS.INVALID_TIMEOUT_AT", async () => {
    const now = h.clock.now().toISOString();
    await refused(LOCKER, { command: "book", timeout_at: now }, 400, "ERRORS.INVALID_TIMEOUT_AT");
  });

  it("books for exactly one hour after now when timeout_at is omitted", async () => {
    const now = h.clock.now();
    const until = new Date(now.getTime() + 60 * 60 * 1000).toISOString();
    const cmd = await bookThroughGateway(LOCKER);
    expect(cmd.name).toBe("book");
    expect(cmd.state.value).toBe("SENT");
    const d = await getDevice(LOCKER);
    expect(d.state.timeout_at).toBe(until);
    expect(d.state.changed_at).toBe(now.toISOString());
    // The gateway records the booking with its end, for local access.
    expect(h.gateways.last().request.params.booking).toEqual({ holder: CLIENTS.admin, until });
  });

  it("books until a future timeout_at given in UTC", async () => {
    await bookThroughGateway(LOCKER, { timeout_at: "2026-01-15T10:45:00Z" });
    expect((await getDevice(LOCKER)).state.timeout_at).toBe("2026-01-15T10:45:00.000Z");
  });

  it("books until the same instant when timeout_at carries a +02:00 offset", async () => {
    await bookThroughGateway(LOCKER, { timeout_at: "2026-01-15T12:30:00+02:00" });
    expect(h.gateways.last().request.params.booking?.until).toBe("2026-01-15T10:30:00.000Z");
    const d = await getDevice(LOCKER);
    expect(d.state.value).toBe("BOOKED");
    expect(d.state.timeout_at).toBe("2026-01-15T10:30:00.000Z");
  });

  it("refuses a +02:00 timeout_at that is in the past in UTC", async () => {
    // 11:30+02:00 is 09:30Z, half an hour before the fake now (10:00Z).
    await refused(
      LOCKER,
      { command: "book", timeout_at: "2026-01-15T11:30:00+02:00" },
      400,
      "ERRORS.INVALID_TIMEOUT_AT",
    );
  });
});

describe("force-unlock reason and comment (S19)", () => {
  harnessPer("test");

  it("refuses force-unlock without a reason with 400 naming reason", async () => {
    await lockThroughGateway(LOCKER);
    const { error } = await refused(LOCKER, { command: "force-unlock" }, 400, "ERRORS.VALIDATION_FAILED");
    expect(error.error_message).toContain("reason");
  });

  it("refuses a reason that is not in the documented list", async () => {
    await refused(LOCKER, { command: "force-unlock", reason: "BECAUSE" }, 400, "ERRORS.VALIDATION_FAILED");
  });

  it.each(["OTHER", "STUCK_USER_OTHER_ISSUE"])(
    "refuses reason %s with a missing or shorter-than-5-character comment",
    async (reason) => {
      await lockThroughGateway(LOCKER);
      for (const comment of [undefined, "", "abcd", "  ab  "]) {
        const { error } = await refused(
          LOCKER,
          { command: "force-unlock", reason, ...(comment === undefined ? {} : { comment }) },
          400,
          "ERRORS.VALIDATION_FAILED",
        );
        expect(error.error_message).toContain("comment");
      }
    },
  );

  it.each(["OTHER", "STUCK_USER_OTHER_ISSUE"])(
    "accepts reason %s with a 5-character comment",
    async (reason) => {
      await lockThroughGateway(LOCKER);
      h.clock.advance(3_000); // past the per-device throttle
      const cmd = await accepted(LOCKER, { command: "force-unlock", reason, comment: "stuck" });
      expect(cmd.name).toBe("force-unlock");
      expect(cmd.state.value).toBe("SENT");
      expect((await getDevice(LOCKER)).state.value).toBe("UNLOCKING");
      expect(h.gateways.last().request.params).toMatchObject({ reason, comment: "stuck" });
    },
  );

  it("accepts a reason that needs no comment", async () => {
    await lockThroughGateway(LOCKER);
    h.clock.advance(3_000); // past the per-device throttle
    const cmd = await accepted(LOCKER, { command: "force-unlock", reason: "MAINTENANCE" });
    expect(cmd.state.value).toBe("SENT");
  });
});

describe("permission refusals (S17, S18)", () => {
  harnessPer("describe");

  it("refuses lock for another user without ACT_ON_BEHALF_OF with 403, and nothing changes", async () => {
    const { error } = await refused(
      LOCKER,
      { command: "lock", user_id: "user-42" },
      403,
      "ERRORS.FORBIDDEN",
      CLIENTS.basic,
    );
    expect(error.error_message).toContain("ACT_ON_BEHALF_OF");
    expect(error.error_message).not.toContain("user-42");
  });

  it.each([
    ["force-lock", {}],
    ["force-unlock", { reason: "MAINTENANCE" }],
    ["force-cancel-booking", {}],
    ["sync-device", {}],
    ["sync-device", { power_cycle: true }],
  ])("refuses %s without DEVICE_ADMIN with 403", async (command, extra) => {
    const { error } = await refused(LOCKER, { command, ...extra }, 403, "ERRORS.FORBIDDEN", CLIENTS.basic);
    expect(error.error_message).toContain("DEVICE_ADMIN");
  });
});

describe("permissions (S17, S18)", () => {
  harnessPer("test");

  it("accepts a rider's lock naming their own service_user_id without ACT_ON_BEHALF_OF", async () => {
    const rider = await riderToken(h, OP_A, "user-41");
    const res = await h.app.inject({
      method: "POST",
      url: `/device/v1/devices/${LOCKER}/commands`,
      headers: { authorization: `Bearer ${rider.token}` },
      payload: { command: "lock", user_id: rider.serviceUserId },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect((await getDevice(LOCKER)).user?.id).toBe(rider.serviceUserId);
  });

  it("locks for the target user with ACT_ON_BEHALF_OF: device.user.id is the target user", async () => {
    await declareExternalUsers(h, { operatorId: OP_A, riders: [{ user_id: "user-42" }] });
    const target = manifestRiderId(OP_A, "user-42");
    const cmd = await accepted(LOCKER, { command: "lock", user_id: target });
    expect(cmd.state.value).toBe("SENT");
    expect((await getDevice(LOCKER)).user?.id).toBe(target);
    await confirm("gw-a1", cmd, "LOCKED");
    const d = await getDevice(LOCKER);
    expect(d.state.value).toBe("LOCKED");
    expect(d.user).toEqual({ id: target, access_key: null });
  });

  it.each([
    ["an invented id", () => "not-a-uuid"],
    ["the client's own id", () => CLIENTS.admin],
    ["a rider of another operator", () => manifestRiderId(OP_B, "user-42")],
  ])(
    "refuses a lock whose user_id is %s with 400 ERRORS.UNKNOWN_USER, and nothing changes",
    async (_what, id) => {
      await declareExternalUsers(h, { operatorId: OP_B, riders: [{ user_id: "user-42" }] });
      const before = await getDevice(LOCKER);
      const res = await post(LOCKER, { command: "lock", user_id: id() });
      expect(res.statusCode).toBe(400);
      expect(ErrorBody.parse(res.json()).error_code).toBe("ERRORS.UNKNOWN_USER");
      expect(await getDevice(LOCKER)).toEqual(before);
      expect(h.gateways.commands).toHaveLength(0);
    },
  );

  it("tells a caller without ACT_ON_BEHALF_OF nothing about whether a user exists", async () => {
    await declareExternalUsers(h, { operatorId: OP_A, riders: [{ user_id: "user-42" }] });
    const known = await post(
      LOCKER,
      { command: "lock", user_id: manifestRiderId(OP_A, "user-42") },
      CLIENTS.basic,
    );
    const unknown = await post(LOCKER, { command: "lock", user_id: "not-a-uuid" }, CLIENTS.basic);
    expect([known.statusCode, unknown.statusCode]).toEqual([403, 403]);
    const { correlation_id: _a, ...knownBody } = known.json();
    const { correlation_id: _b, ...unknownBody } = unknown.json();
    expect(knownBody).toEqual(unknownBody);
  });

  it("refuses force-cancel-booking of a booked locker without DEVICE_ADMIN", async () => {
    await bookThroughGateway(LOCKER, {}, CLIENTS.basic);
    await refused(LOCKER, { command: "force-cancel-booking" }, 403, "ERRORS.FORBIDDEN", CLIENTS.basic);
    expect((await getDevice(LOCKER)).state.value).toBe("BOOKED");
  });

  it("refuses cancel-booking of another caller's booking with 403", async () => {
    await bookThroughGateway(LOCKER, {}, CLIENTS.basic);
    await refused(LOCKER, { command: "cancel-booking" }, 403, "ERRORS.FORBIDDEN", CLIENTS.admin);
  });

  it("lets a caller without extra permissions lock, unlock, book and cancel its own booking", async () => {
    await bookThroughGateway(LOCKER, {}, CLIENTS.basic);
    await confirm("gw-a1", await accepted(LOCKER, { command: "cancel-booking" }, CLIENTS.basic));
    const lock = await accepted(LOCKER, { command: "lock" }, CLIENTS.basic);
    await confirm("gw-a1", lock, "LOCKED");
    h.clock.advance(3_000);
    await accepted(LOCKER, { command: "unlock" }, CLIENTS.basic);
  });
});

describe("lock/unlock throttle", () => {
  harnessPer("test");

  it("answers 429 ERRORS.LOCK_COMMAND_THROTTLED with Retry-After to a second lock/unlock within 3 s", async () => {
    await lockThroughGateway(LOCKER);
    h.clock.advance(2_000);
    const { res } = await refused(LOCKER, { command: "unlock" }, 429, "ERRORS.LOCK_COMMAND_THROTTLED");
    expect(res.headers["retry-after"]).toBe("1");
    h.clock.advance(1_000);
    const cmd = await accepted(LOCKER, { command: "unlock" });
    expect(cmd.state.value).toBe("SENT");
  });

  it("counts Retry-After in whole seconds up from the remaining wait", async () => {
    await lockThroughGateway(LOCKER);
    const { res } = await refused(LOCKER, { command: "unlock" }, 429, "ERRORS.LOCK_COMMAND_THROTTLED");
    expect(res.headers["retry-after"]).toBe("3");
    h.clock.advance(500);
    const again = await refused(LOCKER, { command: "unlock" }, 429, "ERRORS.LOCK_COMMAND_THROTTLED");
    expect(again.res.headers["retry-after"]).toBe("3");
  });

  it("throttles a REMOTE_WAKEUP locker for 15 s: still 429 at 14 s, accepted at 15 s", async () => {
    await lockThroughGateway(REMOTE_WAKEUP_LOCKER);
    h.clock.advance(14_000);
    const { res } = await refused(
      REMOTE_WAKEUP_LOCKER,
      { command: "unlock" },
      429,
      "ERRORS.LOCK_COMMAND_THROTTLED",
    );
    expect(res.headers["retry-after"]).toBe("1");
    h.clock.advance(1_000);
    await accepted(REMOTE_WAKEUP_LOCKER, { command: "unlock" });
  });

  it("throttles every command that reaches the hardware on one device: force commands and sync-device too", async () => {
    await accepted(LOCKER, { command: "lock" });
    // Another device is not affected…
    await accepted(fx.device("L1", "2"), { command: "lock" });
    // …but on this one, force commands and sync-device wait like lock and unlock, with the same 429.
    for (const body of [
      { command: "sync-device" },
      { command: "force-unlock", reason: "TESTING" },
      { command: "force-lock" },
    ]) {
      const { res } = await refused(LOCKER, body, 429, "ERRORS.LOCK_COMMAND_THROTTLED");
      expect(res.headers["retry-after"]).toBe("3");
    }
    h.clock.advance(3_000);
    await accepted(LOCKER, { command: "force-unlock", reason: "TESTING" });
    await refused(LOCKER, { command: "sync-device" }, 429, "ERRORS.LOCK_COMMAND_THROTTLED");
  });

  it("does not throttle bookings, which never reach the hardware", async () => {
    await bookThroughGateway(LOCKER);
    await confirm("gw-a1", await accepted(LOCKER, { command: "cancel-booking" }));
    await bookThroughGateway(LOCKER);
    await confirm("gw-a1", await accepted(LOCKER, { command: "force-cancel-booking" }));
    expect((await getDevice(LOCKER)).state.value).toBe("UNLOCKED");
  });
});

describe("sleeping devices", () => {
  harnessPer("test");

  it("refuses lock on a LOCAL_WAKEUP locker in DEEP_SLEEP with 400 ERRORS.DEVICE_ASLEEP", async () => {
    await deviceRepository(h.db).recordReading(LOCAL_WAKEUP_LOCKER, { sleep_state: "DEEP_SLEEP" });
    expect((await getDevice(LOCAL_WAKEUP_LOCKER)).sleep_state).toBe("DEEP_SLEEP");
    await refused(LOCAL_WAKEUP_LOCKER, { command: "lock" }, 400, "ERRORS.DEVICE_ASLEEP");
    await refused(LOCAL_WAKEUP_LOCKER, { command: "sync-device" }, 400, "ERRORS.DEVICE_ASLEEP");
  });

  it("still books a sleeping LOCAL_WAKEUP locker: a booking needs its gateway, not the device", async () => {
    await deviceRepository(h.db).recordReading(LOCAL_WAKEUP_LOCKER, { sleep_state: "DEEP_SLEEP" });
    await bookThroughGateway(LOCAL_WAKEUP_LOCKER);
    expect(h.gateways.commands.map((c) => c.request.name)).toEqual(["book"]);
  });

  it("accepts lock on an awake LOCAL_WAKEUP locker", async () => {
    const cmd = await accepted(LOCAL_WAKEUP_LOCKER, { command: "lock" });
    expect(cmd.state.value).toBe("SENT");
  });
});

describe("tenancy refusals (S12)", () => {
  harnessPer("describe");

  it("answers operator B's command to operator A's device with the same 404 as for a random id", async () => {
    const a = await refused(LOCKER, { command: "lock" }, 404, "ERRORS.NOT_FOUND", CLIENTS.other);
    const b = await refused(RANDOM_ID, { command: "lock" }, 404, "ERRORS.NOT_FOUND", CLIENTS.other);
    expect(a.error.error_message.replace(LOCKER, "{id}")).toBe(
      b.error.error_message.replace(RANDOM_ID, "{id}"),
    );
    for (const leak of ["LOCKER", "UNLOCKED", "gw-a1"]) expect(a.res.body).not.toContain(leak);
  });

  it("answers operator B's force and admin commands on operator A's device with 404", async () => {
    await refused(
      LOCKER,
      { command: "force-unlock", reason: "TESTING" },
      404,
      "ERRORS.NOT_FOUND",
      CLIENTS.other,
    );
    await refused(LOCKER, { command: "book" }, 404, "ERRORS.NOT_FOUND", CLIENTS.other);
  });
});

describe("tenancy of commands (S12)", () => {
  harnessPer("test");

  it("answers operator B's GET of operator A's command with the same 404 as for a random id", async () => {
    const cmd = await accepted(LOCKER, { command: "lock" });
    const a = await h.call(CLIENTS.other, { method: "GET", url: `/device/v1/commands/${cmd.id}` });
    const b = await h.call(CLIENTS.other, { method: "GET", url: `/device/v1/commands/${RANDOM_ID}` });
    const ea = expectError(a, 404, "ERRORS.NOT_FOUND");
    const eb = expectError(b, 404, "ERRORS.NOT_FOUND");
    expect(ea.error_message.replace(cmd.id, "{id}")).toBe(eb.error_message.replace(RANDOM_ID, "{id}"));
    expect(a.body).not.toContain(LOCKER);
    // The owner still sees it.
    const own = await h.call(CLIENTS.admin, { method: "GET", url: `/device/v1/commands/${cmd.id}` });
    expect(own.statusCode).toBe(200);
  });

  it("answers a command id that is not a uuid like an unknown command: 404", async () => {
    const res = await h.call(CLIENTS.admin, { method: "GET", url: "/device/v1/commands/abc" });
    expectError(res, 404, "ERRORS.NOT_FOUND");
  });
});
