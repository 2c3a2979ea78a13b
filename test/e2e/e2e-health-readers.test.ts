import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { deviceRepository } from "../../cloud/devices/device-repository.ts";
import { hardwareReportRepository } from "../../cloud/gateway-link/hardware-report-repository.ts";
import { eventually } from "../support/eventually.ts";
import { fx } from "../support/fixture-site.ts";
import { type Site, startSite } from "../support/site-harness.ts";

const LOCKER = fx.device("L1", "1");
const GUARD = fx.guard("gw-a1");

for (const broker of ["aedes", "mosquitto"] as const) {
  describe(`health and readers end to end (${broker}, pseudo-terminal serial)`, () => {
    let site: Site;
    const health = async (id: string) =>
      (await site.api("GET", `/device/v1/devices/${id}`)).json().heartbeat_v2;
    beforeEach(async () => {
      site = await startSite({ broker, serial: "pty" });
      await eventually(async () => expect((await health(LOCKER))?.health).toBe("HEALTHY"), 25_000);
      await site.settled();
    });
    afterEach(() => site.stop());

    it("goes UNHEALTHY, DEAD and LONG_DEAD when heartbeats stop, and HEALTHY when they resume", async () => {
      // Muted once the heartbeats already sent are applied: one landing after the jump would look fresh.
      await site.heartbeats.mute();
      site.clock.jump(16_000);
      expect((await health(LOCKER)).health).toBe("UNHEALTHY");
      site.clock.jump(15_000);
      const dead = await health(LOCKER);
      expect(dead.health).toBe("DEAD");
      expect(dead.dead_since).not.toBeNull();
      const location = (await site.api("GET", `/location/v1/locations/${fx.location("L1")}`)).json();
      expect(location.connection).toBe("offline");
      // The location went offline when its last device did (devices are last seen at slightly different
      // moments: a heartbeat, a sensor report).
      const devices = (await site.api("GET", `/device/v1/locations/${fx.location("L1")}/devices`)).json()
        .data;
      const lastDead = devices
        .map((d: { heartbeat_v2: { dead_since: string } }) => d.heartbeat_v2.dead_since)
        .sort()
        .at(-1);
      expect(location.offline_since).toBe(lastDead);
      site.clock.jump(2 * 60 * 60 * 1000);
      expect((await health(LOCKER)).health).toBe("LONG_DEAD");
      expect((await health(GUARD)).health).toBe("LONG_DEAD");
      site.heartbeats.resume();
      await eventually(async () => expect((await health(LOCKER)).health).toBe("HEALTHY"));
      expect((await health(GUARD)).health).toBe("HEALTHY");
    });

    it("reports a lock board that stops answering as not reachable, while the gateway stays healthy", async () => {
      await site.sim.bus("bus0").unplug();
      // Jump only once the heartbeats the cloud applies leave the locker out (the GUARD seen later than it):
      // a heartbeat sent before the gateway noticed, applied after the jump, would make the locker look alive.
      // Heartbeats are applied in the order sent, and the gateway does not see the board again while unplugged.
      const lastSeen = async (id: string) => (await deviceRepository(site.db).find(id))?.last_seen_at ?? "";
      await eventually(
        async () => expect((await lastSeen(GUARD)) > (await lastSeen(LOCKER))).toBe(true),
        20_000,
      );
      site.clock.jump(31_000);
      await eventually(async () => {
        expect((await health(LOCKER)).health).toBe("DEAD");
        expect((await health(GUARD)).health).toBe("HEALTHY");
      }, 25_000);
    });

    it("recovers a reader that is unplugged and plugged back, and reports both", async () => {
      const reader = site.sim.reader("reader-1");
      const readerOpen = async () => (await site.status()).readers[0]?.open;
      await eventually(async () => expect(await readerOpen()).toBe(true));
      await reader.unplug();
      await eventually(async () => expect(await readerOpen()).toBe(false));
      await reader.plugIn();
      await eventually(async () => expect(await readerOpen()).toBe(true), 25_000);
      const taps: string[] = [];
      site.gateway.onTap((_reader, card) => taps.push(card));
      reader.tap("04:A1:B2:C3");
      await eventually(() => expect(taps).toEqual(["04a1b2c3"]));
      await eventually(async () => {
        const events = (await hardwareReportRepository(site.db).eventsOf("gw-a1")).sort(
          (a, b) => a.seq - b.seq,
        );
        expect(events.filter((e) => e.source === "reader-1").map((e) => e.event)).toEqual([
          "reader_lost",
          "reader_back",
        ]);
      });
    });
  });
}
