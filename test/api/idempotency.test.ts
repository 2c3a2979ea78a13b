import type { LightMyRequestResponse } from "fastify";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { commandRepository } from "../../cloud/commands/command-repository.ts";
import { idempotencyRepository } from "../../cloud/idempotency/idempotency-repository.ts";
import { IDEMPOTENCY_POLICY } from "../../cloud/idempotency/idempotency-store.ts";
import { Command } from "../../shared/api/command.ts";
import { ErrorBody } from "../../shared/api/common.ts";
import { type CloudHarness, startCloudHarness } from "../support/cloud-harness.ts";
import { CLIENTS, fx, OP_A, OP_B } from "../support/fixture-site.ts";

/** S28 / U6: Idempotency-Key on the command POST. */

const LOCKER = fx.device("L1", "1");
const OTHER_LOCKER = fx.device("L1", "2");
const THIRD_LOCKER = fx.device("L1", "3");
const B_LOCKER = fx.device("B1", "1");
const DAY_MS = 24 * 3_600_000;
const THROTTLE_MS = 3_000;
const COMMANDS_ROUTE = "/device/v1/devices/:device_id/commands";

let h: CloudHarness;

beforeEach(async () => {
  h = await startCloudHarness();
});
afterEach(() => h.close());

function post(
  key: string | null,
  body: Record<string, unknown>,
  opts: { device?: string; as?: string; token?: string } = {},
): Promise<LightMyRequestResponse> {
  const headers: Record<string, string> = key === null ? {} : { "idempotency-key": key };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  return h.call(opts.token ? null : (opts.as ?? CLIENTS.admin), {
    method: "POST",
    url: `/device/v1/devices/${opts.device ?? LOCKER}/commands`,
    payload: body,
    headers,
  });
}

function commandOf(res: LightMyRequestResponse): Command {
  expect(res.statusCode, res.body).toBe(200);
  return Command.parse(res.json());
}

function errorOf(res: LightMyRequestResponse, status: number, code: string): ErrorBody {
  expect(res.statusCode, res.body).toBe(status);
  const body = ErrorBody.parse(res.json());
  expect(body.error_code).toBe(code);
  expect(body.status_code).toBe(status);
  expect(body.correlation_id).toBe(res.headers["x-correlation-id"]);
  return body;
}

/** Every command of the fixture's two operators, as stored. */
async function storedCommands() {
  const commands = commandRepository(h.db);
  const all = [...(await commands.ofOperator(OP_A)), ...(await commands.ofOperator(OP_B))];
  return all.map(({ id, name, device_id }) => ({ id, name, device_id }));
}

/** How many idempotency keys the admin client (the caller of every keyed request here) holds. */
function adminKeys(): Promise<number> {
  return idempotencyRepository(h.db).countOf(OP_A, CLIENTS.admin);
}

/**
 * Holds the next command the cloud hands to the broker until `release()`: the POST that sent it stays in
 * progress (it waits for the broker's acknowledgement), and `reached` resolves once it got that far.
 */
function holdNextPublish() {
  const publish = h.gateways.publishCommand.bind(h.gateways);
  let held = false;
  let onReached = () => {};
  let release = () => {};
  const reached = new Promise<void>((r) => (onReached = r));
  const released = new Promise<void>((r) => (release = r));
  h.gateways.publishCommand = (gatewayId, request) => {
    if (held) return publish(gatewayId, request);
    held = true;
    onReached();
    return released.then(() => publish(gatewayId, request));
  };
  return { reached, release };
}

describe("Idempotency-Key on POST command", () => {
  it("answers the same key and body with the first response: same command id, one command, one publish", async () => {
    const first = await post("lock-1", { command: "lock" });
    const cmd = commandOf(first);
    expect(first.headers["idempotent-replayed"]).toBeUndefined();

    const again = await post("lock-1", { command: "lock" });
    expect(again.statusCode).toBe(200);
    expect(again.headers["idempotent-replayed"]).toBe("true");
    expect(again.headers["content-type"]).toContain("application/json");
    expect(again.json()).toEqual(first.json());
    expect(commandOf(again).id).toBe(cmd.id);

    expect(h.gateways.commands).toHaveLength(1);
    expect(await storedCommands()).toEqual([{ id: cmd.id, name: "lock", device_id: LOCKER }]);
  });

  it("treats a body with its keys in another order as the same request", async () => {
    const cmd = commandOf(await post("sync-1", { command: "sync-device", power_cycle: true }));
    const again = await post("sync-1", { power_cycle: true, command: "sync-device" });
    expect(again.headers["idempotent-replayed"]).toBe("true");
    expect(commandOf(again).id).toBe(cmd.id);
    expect(await storedCommands()).toHaveLength(1);
  });

  it("refuses the same key with a different body or another device with 422, and creates nothing", async () => {
    const cmd = commandOf(await post("k", { command: "sync-device" }));
    h.clock.advance(THROTTLE_MS);

    const otherBody = await post("k", { command: "sync-device", power_cycle: true });
    const err = errorOf(otherBody, 422, "ERRORS.IDEMPOTENCY_KEY_REUSED");
    expect(err.error_message).toMatch(/different request/);
    errorOf(await post("k", { command: "lock" }), 422, "ERRORS.IDEMPOTENCY_KEY_REUSED");
    errorOf(
      await post("k", { command: "sync-device" }, { device: OTHER_LOCKER }),
      422,
      "ERRORS.IDEMPOTENCY_KEY_REUSED",
    );

    expect(await storedCommands()).toEqual([{ id: cmd.id, name: "sync-device", device_id: LOCKER }]);
    expect(h.gateways.commands).toHaveLength(1);
    // The key still answers its own request.
    expect(commandOf(await post("k", { command: "sync-device" })).id).toBe(cmd.id);
  });

  it("answers a second request with the key while the first is running with 409 and Retry-After; then replays", async () => {
    const hold = holdNextPublish();
    const firstPending = post("race", { command: "lock" });
    await hold.reached; // the first POST has reserved the key and created its command

    const second = await post("race", { command: "lock" });
    errorOf(second, 409, "ERRORS.IDEMPOTENCY_KEY_IN_USE");
    expect(Number(second.headers["retry-after"])).toBeGreaterThan(0);

    hold.release();
    const firstRes = await firstPending;
    expect(firstRes.headers["idempotent-replayed"]).toBeUndefined();
    const first = commandOf(firstRes);
    expect(first.state.value).toBe("SENT");

    const retry = await post("race", { command: "lock" });
    expect(retry.headers["idempotent-replayed"]).toBe("true");
    expect(commandOf(retry).id).toBe(first.id);
    expect(await storedCommands()).toHaveLength(1);
    expect(h.gateways.commands).toHaveLength(1);
  });

  it("keeps the keys of each API client and operator apart", async () => {
    const a = commandOf(await post("shared-key", { command: "lock" }));
    const basic = commandOf(
      await post("shared-key", { command: "lock" }, { as: CLIENTS.basic, device: OTHER_LOCKER }),
    );
    const b = commandOf(
      await post("shared-key", { command: "lock" }, { as: CLIENTS.other, device: B_LOCKER }),
    );

    expect(new Set([a.id, basic.id, b.id]).size).toBe(3);
    expect(h.gateways.commands.map((c) => c.gatewayId)).toEqual(["gw-a1", "gw-a1", "gw-b1"]);
    // Operator B repeating its key gets its own command back, never A's.
    const bAgain = await post("shared-key", { command: "lock" }, { as: CLIENTS.other, device: B_LOCKER });
    expect(bAgain.headers["idempotent-replayed"]).toBe("true");
    expect(commandOf(bAgain).id).toBe(b.id);
  });

  it("replays the first result for 24 h; after that the key is new and the old row is purged", async () => {
    const first = commandOf(await post("day", { command: "sync-device" }));
    h.clock.advance(DAY_MS - 1);
    let token = await h.freshToken(CLIENTS.admin);
    const within = await post("day", { command: "sync-device" }, { token });
    expect(within.headers["idempotent-replayed"]).toBe("true");
    expect(commandOf(within).id).toBe(first.id);

    h.clock.advance(1);
    // Expired: the key behaves as new, even with another body.
    const renewed = await post("day", { command: "sync-device", power_cycle: true }, { token });
    expect(renewed.headers["idempotent-replayed"]).toBeUndefined();
    expect(commandOf(renewed).id).not.toBe(first.id);
    commandOf(await post("other-day", { command: "sync-device" }, { token, device: OTHER_LOCKER }));

    h.clock.advance(DAY_MS);
    token = await h.freshToken(CLIENTS.admin);
    commandOf(await post("next-day", { command: "sync-device" }, { token }));
    // The expired rows were purged: the one the caller still holds is the new one.
    expect(await adminKeys()).toBe(1);
    const scope = { operatorId: OP_A, clientId: CLIENTS.admin, method: "POST", route: COMMANDS_ROUTE };
    expect(await idempotencyRepository(h.db).find({ ...scope, key: "next-day" })).toBeDefined();
  });

  it("leaves no key behind a refused command: a retry with it runs again, and a corrected body is no 422", async () => {
    const refused = await post("bad", { command: "force-unlock" });
    errorOf(refused, 400, "ERRORS.VALIDATION_FAILED");
    const again = await post("bad", { command: "force-unlock" });
    expect(again.headers["idempotent-replayed"]).toBeUndefined();
    errorOf(again, 400, "ERRORS.VALIDATION_FAILED");
    expect(await adminKeys()).toBe(0);
    // The integrator fixes the request and retries with the same key: it runs, and is kept from then on.
    const fixed = commandOf(await post("bad", { command: "force-unlock", reason: "MAINTENANCE" }));
    const replay = await post("bad", { command: "force-unlock", reason: "MAINTENANCE" });
    expect(replay.headers["idempotent-replayed"]).toBe("true");
    expect(commandOf(replay).id).toBe(fixed.id);
    errorOf(await post("bad", { command: "force-unlock" }), 422, "ERRORS.IDEMPOTENCY_KEY_REUSED");
    expect(await storedCommands()).toHaveLength(1);
  });

  it("keeps no key for requests about devices that do not exist, however many (a flood of 404s)", async () => {
    const missing = "00000000-0000-4000-8000-000000000000";
    const answers = await Promise.all(
      Array.from({ length: 300 }, (_, i) => post(`nothing-${i}`, { command: "lock" }, { device: missing })),
    );
    for (const res of answers) errorOf(res, 404, "ERRORS.NOT_FOUND");
    expect(await adminKeys()).toBe(0);
  });

  it("releases a 429 outcome (a retry runs again)", async () => {
    commandOf(await post(null, { command: "lock" }));
    errorOf(
      await post("throttled", { command: "lock" }, { device: LOCKER }),
      429,
      "ERRORS.LOCK_COMMAND_THROTTLED",
    );
    h.clock.advance(THROTTLE_MS);
    // Not the lock: the device is ALLOCATED now; but the request ran again instead of replaying the 429.
    const retried = await post("throttled", { command: "lock" });
    expect(retried.headers["idempotent-replayed"]).toBeUndefined();
    errorOf(retried, 400, "ERRORS.COMMAND_NOT_ALLOWED_IN_STATE");
  });

  it("answers 429 ERRORS.IDEMPOTENCY_KEY_LIMIT_REACHED past the caller's live keys, creating nothing", async () => {
    await h.close();
    h = await startCloudHarness({
      idempotency: { ...IDEMPOTENCY_POLICY, maxLiveKeys: { client: 2, user: 1 } },
    });
    commandOf(await post("one", { command: "sync-device" }));
    commandOf(await post("two", { command: "sync-device" }, { device: OTHER_LOCKER }));
    const over = await post("three", { command: "sync-device" }, { device: THIRD_LOCKER });
    errorOf(over, 429, "ERRORS.IDEMPOTENCY_KEY_LIMIT_REACHED");
    expect(Number(over.headers["retry-after"])).toBe(DAY_MS / 1000);
    expect(await storedCommands()).toHaveLength(2);
    expect(h.gateways.commands).toHaveLength(2);
    // The same command without a key goes through.
    commandOf(await post(null, { command: "sync-device" }, { device: THIRD_LOCKER }));
  });

  it("refuses a body nested thousands deep with 400 (hashing it does not overflow), reserving nothing", async () => {
    const depth = 20_000;
    const res = await h.call(CLIENTS.admin, {
      method: "POST",
      url: `/device/v1/devices/${LOCKER}/commands`,
      headers: { "idempotency-key": "deep", "content-type": "application/json" },
      payload: `{"command":${"[".repeat(depth)}${"]".repeat(depth)}}`,
    });
    errorOf(res, 400, "ERRORS.VALIDATION_FAILED");
    expect(await adminKeys()).toBe(0);
    commandOf(await post("deep", { command: "lock" }));
  });

  it("refuses a malformed key with 400 in the error body and creates nothing", async () => {
    for (const key of ["", "x".repeat(256), "clé", "tab\there"]) {
      const err = errorOf(await post(key, { command: "lock" }), 400, "ERRORS.VALIDATION_FAILED");
      expect(err.error_message).toContain("headers.idempotency-key");
    }
    expect(await storedCommands()).toEqual([]);
    expect(await adminKeys()).toBe(0);
    // The longest and most varied valid key.
    const longest = ` ${"~!#$%&'()*+,-./:;<=>?@[\\]^_`{|}".repeat(8)}`.padEnd(255, "z");
    expect(longest).toHaveLength(255);
    commandOf(await post(longest, { command: "lock" }));
  });

  it("without a key behaves as before and stores nothing", async () => {
    commandOf(await post(null, { command: "sync-device" }));
    h.clock.advance(THROTTLE_MS);
    commandOf(await post(null, { command: "sync-device" }));
    expect(await storedCommands()).toHaveLength(2);
    expect(await adminKeys()).toBe(0);
  });

  it("documents the header and the 409/422 answers in OpenAPI, and not on the token endpoint", async () => {
    type Op = { parameters?: { in: string; name: string; required?: boolean; description?: string }[] };
    type Doc = {
      paths: Record<string, Record<string, Op & { responses: Record<string, { description: string }> }>>;
    };
    const doc = (await h.app.inject({ method: "GET", url: "/openapi.json" })).json() as Doc;
    const op = doc.paths["/device/v1/devices/{device_id}/commands"]?.post;
    const header = op?.parameters?.find(
      (p) => p.in === "header" && p.name.toLowerCase() === "idempotency-key",
    );
    expect(header?.required).toBe(false);
    expect(header?.description).toMatch(/24 h/);
    expect(op?.responses["409"]?.description).toContain("ERRORS.IDEMPOTENCY_KEY_IN_USE");
    expect(op?.responses["422"]?.description).toContain("ERRORS.IDEMPOTENCY_KEY_REUSED");
    expect(op?.responses["429"]?.description).toContain("ERRORS.IDEMPOTENCY_KEY_LIMIT_REACHED");
    expect(header?.description).toMatch(/Only a 2xx answer is kept/);
    const token = doc.paths["/oauth2/token"]?.post;
    expect(token?.parameters?.some((p) => p.name.toLowerCase() === "idempotency-key") ?? false).toBe(false);
  });
});
