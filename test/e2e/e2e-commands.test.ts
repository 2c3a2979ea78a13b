import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { jam } from "../../hardware-sim/faults.ts";
import type { CommandRequest } from "../../shared/wire/messages.ts";
import { topicFor } from "../../shared/wire/topics.ts";
import { eventually } from "../support/eventually.ts";
import { fx } from "../support/fixture-site.ts";
import { type Site, startSite } from "../support/site-harness.ts";

const LOCKER = fx.device("L1", "1"); // board 1, channel 1 on gw-a1's bus0

const lockRequests = (site: Site) =>
  site.sim.board("bus0", 1).received.filter((r) => r.kind === "lock" && r.channel === 1);

/** One GET that the cloud holds until the command has ended (`Prefer: wait`): no polling. */
async function commandUntilSettled(site: Site, id: string) {
  const res = await site.api("GET", `/device/v1/commands/${id}`, undefined, { prefer: "wait=25" });
  expect(res.headers["preference-applied"]).toBe("wait=25");
  const c = res.json();
  expect(["SUCCESS", "ERROR"]).toContain(c.state.value);
  return c;
}

for (const broker of ["aedes", "mosquitto"] as const) {
  describe(`a command from the API to a lock and back (${broker}, pseudo-terminal serial)`, () => {
    let site: Site;
    beforeEach(async () => {
      site = await startSite({ broker, serial: "pty" });
      // The gateway has its device map once it reports the lockers reachable.
      await eventually(async () => {
        const d = (await site.api("GET", `/device/v1/devices/${LOCKER}`)).json();
        expect(d.heartbeat_v2?.health).toBe("HEALTHY");
      }, 25_000);
    });
    afterEach(() => site.stop());

    it("locks a locker: SUCCESS with the spec's events, device LOCKED, latch locked", async () => {
      const post = await site.api("POST", `/device/v1/devices/${LOCKER}/commands`, { command: "lock" });
      expect(post.statusCode).toBe(200);
      const done = await commandUntilSettled(site, post.json().id);
      expect(done.state.value).toBe("SUCCESS");
      const names = done.events.map((e: { name: string }) => e.name);
      expect(names).toEqual(
        expect.arrayContaining(["REQUEST_INITIATED", "REQUEST_SENT", "RESPONSE_DEVICE_LOCKED"]),
      );
      expect(names.indexOf("REQUEST_INITIATED")).toBeLessThan(names.indexOf("RESPONSE_DEVICE_LOCKED"));
      const device = (await site.api("GET", `/device/v1/devices/${LOCKER}`)).json();
      expect(device.state.value).toBe("LOCKED");
      expect(device.lock_state).toBe("LOCKED");
      expect(site.sim.board("bus0", 1).channel(1).latch).toBe("locked");
    });

    it("answers a POST with Prefer: wait once the lock has moved, in one request", async () => {
      const post = await site.api(
        "POST",
        `/device/v1/devices/${LOCKER}/commands`,
        { command: "lock" },
        { prefer: "wait=25" },
      );
      expect(post.statusCode).toBe(200);
      expect(post.headers["preference-applied"]).toBe("wait=25");
      expect(post.json().state.value).toBe("SUCCESS");
      expect(site.sim.board("bus0", 1).channel(1).latch).toBe("locked");
    });

    it("unlocks a locked locker: SUCCESS and UNLOCKED", async () => {
      const lock = await site.api("POST", `/device/v1/devices/${LOCKER}/commands`, { command: "lock" });
      expect((await commandUntilSettled(site, lock.json().id)).state.value).toBe("SUCCESS");
      site.clock.jump(3_100); // past the per-device lock/unlock throttle
      const unlock = await site.api("POST", `/device/v1/devices/${LOCKER}/commands`, { command: "unlock" });
      const done = await commandUntilSettled(site, unlock.json().id);
      expect(done.state.value).toBe("SUCCESS");
      expect(done.events.map((e: { name: string }) => e.name)).toContain("RESPONSE_DEVICE_UNLOCKED");
      expect((await site.api("GET", `/device/v1/devices/${LOCKER}`)).json().state.value).toBe("UNLOCKED");
      expect(site.sim.board("bus0", 1).channel(1).latch).toBe("unlocked");
    });

    it("ends in ERROR at the deadline when the gateway is silent, and the device returns to UNLOCKED", async () => {
      await site.stopGateway();
      const post = await site.api("POST", `/device/v1/devices/${LOCKER}/commands`, { command: "lock" });
      expect((await site.api("GET", `/device/v1/devices/${LOCKER}`)).json().state.value).toBe("ALLOCATED");
      site.clock.jump(31_000);
      const done = await commandUntilSettled(site, post.json().id);
      expect(done.state.value).toBe("ERROR");
      expect(done.state.reason).toMatch(/deadline/);
      expect((await site.api("GET", `/device/v1/devices/${LOCKER}`)).json().state.value).toBe("UNLOCKED");
    });

    it("reports a jammed latch as ERROR with a reason", async () => {
      site.sim.board("bus0", 1).use(jam(1));
      const post = await site.api("POST", `/device/v1/devices/${LOCKER}/commands`, { command: "lock" });
      const done = await commandUntilSettled(site, post.json().id);
      expect(done.state.value).toBe("ERROR");
      expect(done.state.reason).toMatch(/jammed/);
      expect((await site.api("GET", `/device/v1/devices/${LOCKER}`)).json().state.value).toBe("UNLOCKED");
    });

    it("books through the gateway, which records the booking; cancel-booking ends it there too", async () => {
      const until = new Date(site.clock.now().getTime() + 30 * 60_000).toISOString();
      const post = await site.api("POST", `/device/v1/devices/${LOCKER}/commands`, {
        command: "book",
        timeout_at: until,
      });
      // The gateway may answer before the POST does: the record is SENT or already further.
      expect(["SENT", "RECEIVED", "SUCCESS"]).toContain(post.json().state.value);
      const booked = await commandUntilSettled(site, post.json().id);
      expect(booked.state.value).toBe("SUCCESS");
      expect(booked.events.map((e: { name: string }) => e.name)).toContain("STATE_BOOKED");
      expect((await site.api("GET", `/device/v1/devices/${LOCKER}`)).json().state).toMatchObject({
        value: "BOOKED",
        timeout_at: until,
      });
      // The gateway holds it for local access, as parkctl shows it; nothing moved on the bus.
      expect((await site.gatewayDevice("1"))?.booking).toEqual({ holder: "a-admin", until });
      expect(lockRequests(site)).toHaveLength(0);

      const cancel = await site.api("POST", `/device/v1/devices/${LOCKER}/commands`, {
        command: "cancel-booking",
      });
      expect((await commandUntilSettled(site, cancel.json().id)).state.value).toBe("SUCCESS");
      expect((await site.api("GET", `/device/v1/devices/${LOCKER}`)).json().state.value).toBe("UNLOCKED");
      expect((await site.gatewayDevice("1"))?.booking).toBeNull();
    });

    it("actuates a redelivered command once", async () => {
      const post = await site.api("POST", `/device/v1/devices/${LOCKER}/commands`, { command: "lock" });
      expect((await commandUntilSettled(site, post.json().id)).state.value).toBe("SUCCESS");
      // Play a QoS 1 redelivery: the very same command again on the gateway's topic, from the cloud's
      // own session (the embedded broker admits the cloud's user under one client id only).
      const replay: CommandRequest = {
        command_id: post.json().id,
        device_id: LOCKER,
        name: "lock",
        params: {},
        issued_at: site.clock.now().toISOString(),
        expires_at: new Date(site.clock.now().getTime() + 30_000).toISOString(),
      };
      await site.link.client.publishAsync(topicFor(site.prefix, "gw-a1", "cmd"), JSON.stringify(replay), {
        qos: 1,
      });
      // A later command on the same topic is a barrier: once it is done, the replay was handled too.
      site.clock.jump(3_100);
      const unlock = await site.api("POST", `/device/v1/devices/${LOCKER}/commands`, { command: "unlock" });
      expect((await commandUntilSettled(site, unlock.json().id)).state.value).toBe("SUCCESS");
      expect(lockRequests(site)).toHaveLength(1);
      expect((await site.api("GET", `/device/v1/commands/${post.json().id}`)).json().state.value).toBe(
        "SUCCESS",
      );
    });

    it("does not actuate a stale command that arrives after its deadline", async () => {
      await site.stopGateway();
      const post = await site.api("POST", `/device/v1/devices/${LOCKER}/commands`, { command: "lock" });
      site.clock.jump(31_000);
      expect((await commandUntilSettled(site, post.json().id)).state.value).toBe("ERROR");
      // The broker kept the command for the gateway's persistent session: it arrives now, too late.
      await site.startGateway();
      // What the gateway itself recorded for the command, as parkctl shows it.
      const logged = async () => (await site.gatewayDevice("1"))?.last_command;
      await eventually(
        async () => expect(await logged()).toMatchObject({ command_id: post.json().id, result: "ERROR" }),
        10_000,
      );
      expect((await logged())?.reason).toMatch(/after its deadline/);
      expect(lockRequests(site)).toHaveLength(0);
      const cmd = (await site.api("GET", `/device/v1/commands/${post.json().id}`)).json();
      expect(cmd.state.value).toBe("ERROR"); // exactly one terminal state
    });
  });
}
