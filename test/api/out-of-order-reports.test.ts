import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { deviceRepository } from "../../cloud/devices/device-repository.ts";
import { hardwareReportRepository } from "../../cloud/gateway-link/hardware-report-repository.ts";
import { sessionRepository } from "../../cloud/sessions/session-repository.ts";
import { Command } from "../../shared/api/command.ts";
import { Device } from "../../shared/api/device.ts";
import { type CloudHarness, startCloudHarness } from "../support/cloud-harness.ts";
import { CLIENTS, fx, OP_A } from "../support/fixture-site.ts";
import { gatewayReports } from "../support/gateway-reports.ts";
import { declareExternalUsers, manifestRiderId } from "../support/riders.ts";

/** A rider of operator A, whom the integrator locks for (ACT_ON_BEHALF_OF). */
const RIDER = manifestRiderId(OP_A, "rider-1");

/**
 * Replicas of the cloud in one shared-subscription group each take some of a gateway's reports and apply
 * them side by side, so they land in any order: the end state must be the one outbox order gives.
 */
const LOCKER = fx.device("L1", "1");

let h: CloudHarness;
const gateway = gatewayReports(() => h);
beforeEach(async () => {
  h = await startCloudHarness();
  await declareExternalUsers(h, { operatorId: OP_A, riders: [{ user_id: "rider-1" }] });
});
afterEach(() => h.close());

async function post(body: Record<string, unknown>) {
  const res = await h.call(CLIENTS.admin, {
    method: "POST",
    url: `/device/v1/devices/${LOCKER}/commands`,
    payload: body,
  });
  expect(res.statusCode, res.body).toBe(200);
  return Command.parse(res.json());
}

const get = async (url: string) => (await h.call(CLIENTS.admin, { method: "GET", url })).json();
const device = async () => Device.parse(await get(`/device/v1/devices/${LOCKER}`));

/** A card's rfid_parking lock of the locker, as its gateway reports it at outbox position `seq`. */
const parked = (seq: number) =>
  h.report("gw-a1", {
    type: "access_decision",
    gateway_id: "gw-a1",
    seq,
    observed_at: h.clock.now().toISOString(),
    reader: "reader-1",
    device_id: LOCKER,
    card_id: "04a1b2c3",
    granted: true,
    action: "lock",
    reason: "parked",
    whitelist_id: null,
    decided_by: "local",
    actuated: true,
  });

function orders<T>(xs: T[]): T[][] {
  if (xs.length <= 1) return [xs];
  return xs.flatMap((x, i) => orders([...xs.slice(0, i), ...xs.slice(i + 1)]).map((rest) => [x, ...rest]));
}

describe("one gateway's reports applied out of outbox order", () => {
  // An occupied locker is unlocked by command, and the rider at once latches it shut again by hand:
  // RECEIVED (1st), SUCCESS with the latch open (2nd), a reading of the latch shut (3rd).
  it.each(orders(["received", "unlocked", "relatched"]))(
    "in the order %s, %s, %s the locker ends as the hardware left it: LOCKED, the command a SUCCESS",
    async (...order: string[]) => {
      await gateway.progress("gw-a1", await post({ command: "lock", user_id: RIDER }), "SUCCESS", {
        lock_state: "LOCKED",
      });
      h.clock.advance(h.timeouts.throttleMs);
      const unlock = await post({ command: "unlock" });
      const seq = { received: gateway.nextSeq(), unlocked: gateway.nextSeq(), relatched: gateway.nextSeq() };
      const apply = {
        received: () => gateway.progress("gw-a1", unlock, "RECEIVED", { seq: seq.received }),
        unlocked: () =>
          gateway.progress("gw-a1", unlock, "SUCCESS", { lock_state: "UNLOCKED", seq: seq.unlocked }),
        relatched: () =>
          gateway.deviceState("gw-a1", LOCKER, { lock_state: "LOCKED" }, { seq: seq.relatched }),
      } as const;
      for (const step of order) expect(await apply[step as keyof typeof apply]()).toBe("applied");

      const ended = Command.parse(await get(`/device/v1/commands/${unlock.id}`));
      expect(ended.state.value).toBe("SUCCESS");
      // A RECEIVED overtaken by the outcome still takes its place in the history.
      expect(ended.events.map((e) => e.name)).toEqual([
        "REQUEST_INITIATED",
        "REQUEST_SENT",
        "RESPONSE_COMMAND_RECEIVED",
        "RESPONSE_DEVICE_UNLOCKED",
      ]);
      const d = await device();
      expect({ state: d.state.value, lock_state: d.lock_state, user: d.user }).toEqual({
        state: "LOCKED",
        lock_state: "LOCKED",
        user: null,
      });
    },
  );

  it("an older lock reading applied after a newer one changes nothing", async () => {
    const older = gateway.nextSeq();
    const newer = gateway.nextSeq();
    await gateway.deviceState("gw-a1", LOCKER, { lock_state: "LOCKED", cause: "technician" }, { seq: newer });
    const sensorsAt = h.clock.now().toISOString();
    h.clock.advance(1_000);
    expect(await gateway.deviceState("gw-a1", LOCKER, { lock_state: "UNLOCKED" }, { seq: older })).toBe(
      "applied",
    );
    const d = await device();
    expect({ state: d.state.value, lock_state: d.lock_state }).toEqual({
      state: "LOCKED",
      lock_state: "LOCKED",
    });
    expect((await deviceRepository(h.db).find(LOCKER))?.sensors_at).toBe(sensorsAt);
    const changes = await hardwareReportRepository(h.db).stateChangesOf(LOCKER);
    expect(changes.map(({ seq, to_value }) => ({ seq, to_value }))).toEqual([
      { seq: newer, to_value: "LOCKED" },
    ]);
  });

  it("each sensor keeps the value of the latest report that carried it", async () => {
    const first = gateway.nextSeq();
    const second = gateway.nextSeq();
    const third = gateway.nextSeq();
    await gateway.deviceState("gw-a1", LOCKER, { door_open: true }, { seq: third });
    await gateway.deviceState("gw-a1", LOCKER, { sleep_state: "LIGHT_SLEEP" }, { seq: second });
    await gateway.deviceState(
      "gw-a1",
      LOCKER,
      { door_open: false, item_present: true, sleep_state: "" },
      { seq: first },
    );
    const stored = await deviceRepository(h.db).find(LOCKER);
    expect(stored).toMatchObject({ door_open: true, item_present: true, sleep_state: "LIGHT_SLEEP" });
  });

  it("a card parking applied after the latch was found open again opens no session", async () => {
    const tap = gateway.nextSeq();
    const latched = gateway.nextSeq();
    const opened = gateway.nextSeq();
    await gateway.deviceState("gw-a1", LOCKER, { lock_state: "LOCKED", cause: "tap" }, { seq: latched });
    await gateway.deviceState("gw-a1", LOCKER, { lock_state: "UNLOCKED" }, { seq: opened });
    expect(await parked(tap)).toBe("applied");
    const sessions = await sessionRepository(h.db).onDevice(LOCKER, ["active"]);
    // In outbox order the tap opened a session and the open latch ended it.
    expect(sessions).toEqual([]);
  });

  // Found by the seeded simulation (seed 500235): a master key opened the locker, a technician locked it
  // again, and both readings went ahead of the card's parking they followed.
  it("a card parking applied after the latch was found open and then locked again opens no session", async () => {
    const tap = gateway.nextSeq();
    const latched = gateway.nextSeq();
    const opened = gateway.nextSeq();
    const relocked = gateway.nextSeq();
    await gateway.deviceState("gw-a1", LOCKER, { lock_state: "LOCKED", cause: "tap" }, { seq: latched });
    await gateway.deviceState("gw-a1", LOCKER, { lock_state: "UNLOCKED", cause: "tap" }, { seq: opened });
    await gateway.deviceState(
      "gw-a1",
      LOCKER,
      { lock_state: "LOCKED", cause: "technician" },
      { seq: relocked },
    );
    expect(await parked(tap)).toBe("applied");
    expect(await sessionRepository(h.db).onDevice(LOCKER, ["active"])).toEqual([]);
    expect((await device()).lock_state).toBe("LOCKED");
  });
});
