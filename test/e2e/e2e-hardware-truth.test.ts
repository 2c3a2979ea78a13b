import { afterEach, describe, expect, it } from "vitest";
import { gatewayRepository } from "../../cloud/gateway-link/gateway-repository.ts";
import { hardwareReportRepository } from "../../cloud/gateway-link/hardware-report-repository.ts";
import { applyManifest } from "../../cloud/manifest/apply-manifest.ts";
import { SiteManifest } from "../../cloud/manifest/manifest-schema.ts";
import { controlSocketPath } from "../../gateway/config.ts";
import { callControl } from "../../gateway/control/control-client.ts";
import { fixtureSecretHash } from "../support/cloud-harness.ts";
import { eventually } from "../support/eventually.ts";
import { fixtureManifest, fx } from "../support/fixture-site.ts";
import { startPrivateMosquitto } from "../support/private-mosquitto.ts";
import { type Site, type SiteOptions, startSite } from "../support/site-harness.ts";

/** The fixture's lockers on gw-a1: alias → board 1 channel. */
const LOCKERS = ["1", "2", "3", "4", "5"] as const;
const id = (alias: string) => fx.device("L1", alias);

type DeviceBody = { state: { value: string }; lock_state: string };

async function device(site: Site, alias: string): Promise<DeviceBody> {
  return (await site.api("GET", `/device/v1/devices/${id(alias)}`)).json();
}

/**
 * The promise: for every locking device, the cloud's `state`, its `lock_state`, the gateway's live
 * latch and the simulated latch all say the same thing.
 */
async function expectAgreement(site: Site) {
  await eventually(async () => {
    for (const alias of LOCKERS) {
      const channel = site.sim.board("bus0", 1).channel(Number(alias)).latch;
      const live = (await site.gatewayDevice(alias))?.latch ?? null;
      const expected = channel === "locked" ? "LOCKED" : "UNLOCKED";
      const d = await device(site, alias);
      expect({ alias, live, lock_state: d.lock_state, state: d.state.value }).toEqual({
        alias,
        live: channel,
        lock_state: expected,
        state: expected,
      });
    }
  }, 20_000);
}

/** State changes the sensors caused, as the cloud recorded them (who and why). */
async function changes(site: Site, alias: string) {
  return (await hardwareReportRepository(site.db).stateChangesOf(id(alias)))
    .sort((a, b) => a.seq - b.seq)
    .map(({ from_value, to_value, cause, detail }) => ({ from_value, to_value, cause, detail }));
}

function commandOutcome(site: Site, commandId: string, timeoutMs = 20_000) {
  return eventually(async () => {
    const c = (await site.api("GET", `/device/v1/commands/${commandId}`)).json();
    expect(["SUCCESS", "ERROR"]).toContain(c.state.value);
    return c as { state: { value: string; reason: string } };
  }, timeoutMs);
}

const control = (site: Site, method: string, params: Record<string, unknown>) =>
  callControl(controlSocketPath(site.gatewayConfig, {}), method, params);

for (const broker of ["aedes", "mosquitto"] as const) {
  describe(`the hardware is the truth (${broker}, pseudo-terminal serial)`, () => {
    let site: Site | null = null;
    const start = async (o: Partial<SiteOptions> = {}) => {
      site = await startSite({ broker, serial: "pty", ...o });
      return site;
    };
    afterEach(async () => {
      await site?.stop();
      site = null;
    });

    it("after start, the cloud shows what the latches hold", async () => {
      const s = await start({
        prepare: (sim) => {
          sim.board("bus0", 1).channel(2).latch = "locked";
          sim.board("bus0", 1).channel(4).latch = "locked";
        },
      });
      await expectAgreement(s);
      expect((await device(s, "2")).state.value).toBe("LOCKED");
      expect((await device(s, "1")).state.value).toBe("UNLOCKED");
      // Read when the board first answered, or (on a first start, before any map was stored) when the
      // device map arrived.
      const recorded = await changes(s, "2");
      expect(recorded).toHaveLength(1);
      expect(recorded[0]).toMatchObject({ from_value: "UNLOCKED", to_value: "LOCKED" });
      expect(["startup", "device_map"]).toContain(recorded[0]?.cause);
    });

    it("a technician's lock and test cycle through the control socket move the cloud, with who and why", async () => {
      const s = await start();
      await expectAgreement(s);
      await control(s, "actuate", { alias: "3", action: "lock", who: "alice", why: "door rattles" });
      await expectAgreement(s);
      expect((await device(s, "3")).state.value).toBe("LOCKED");
      expect(await changes(s, "3")).toEqual([
        {
          from_value: "UNLOCKED",
          to_value: "LOCKED",
          cause: "technician",
          detail: "lock by alice: door rattles (ok)",
        },
      ]);

      // A test cycle ends with the latch locked: the cloud follows, though no command was sent.
      await control(s, "testCycle", { alias: "1", who: "bob" });
      await expectAgreement(s);
      expect((await device(s, "1")).state.value).toBe("LOCKED");
      expect((await changes(s, "1")).at(-1)).toMatchObject({
        cause: "technician",
        detail: "test-cycle by bob (ok)",
      });
    });

    it("a latch turned by hand is reported and moves the cloud's state both ways", async () => {
      const s = await start();
      await expectAgreement(s);
      s.sim.board("bus0", 1).turnLatch(5, "locked");
      await expectAgreement(s);
      expect((await device(s, "5")).state.value).toBe("LOCKED");
      s.sim.board("bus0", 1).turnLatch(5, "unlocked");
      await expectAgreement(s);
      expect((await device(s, "5")).state.value).toBe("UNLOCKED");
      expect((await changes(s, "5")).map((c) => c.cause)).toEqual(["hardware_event", "hardware_event"]);
    });

    it("sync-device reads a change that no event reported", async () => {
      const s = await start();
      await expectAgreement(s);
      s.sim.board("bus0", 1).channel(2).latch = "locked"; // silently: no board event
      const post = await s.api("POST", `/device/v1/devices/${id("2")}/commands`, { command: "sync-device" });
      expect(post.statusCode, post.body).toBe(200);
      expect((await commandOutcome(s, post.json().id)).state.value).toBe("SUCCESS");
      await expectAgreement(s);
      // Normally the sync's reading moves it; on a slow start the first read of the board may still have
      // been under way and seen the change first (gateway-executor.test.ts pins the sync report itself).
      const last = (await changes(s, "2")).at(-1);
      expect(last).toMatchObject({ to_value: "LOCKED" });
      expect(["sync", "startup", "device_map"]).toContain(last?.cause);
    });

    it("a board that comes back after an outage is read again", async () => {
      const s = await start();
      await expectAgreement(s);
      const bus = s.sim.bus("bus0");
      await bus.unplug();
      await eventually(async () => expect((await s.status()).buses[0]?.open).toBe(false), 20_000);
      s.sim.board("bus0", 1).channel(1).latch = "locked"; // changed while the gateway could not see
      await bus.plugIn();
      await expectAgreement(s);
      expect((await changes(s, "1")).at(-1)).toMatchObject({ cause: "board_back", to_value: "LOCKED" });
    });

    it("a manifest applied to the running site reaches its gateway, which drives the new locker at once", async () => {
      const s = await start();
      await expectAgreement(s);
      const manifest = fixtureManifest(await fixtureSecretHash());
      manifest.operators[0]?.locations?.[0]?.gateways?.[0]?.devices?.push({
        alias: "6",
        type: "LOCKER",
        bus: { board: 1, channel: 6 },
      });
      s.sim.board("bus0", 1).channel(6).latch = "unlocked";
      await applyManifest(s.db, SiteManifest.parse(manifest), s.clock);
      await eventually(async () => expect(await s.gatewayDevice("6")).toBeDefined(), 20_000);
      // The new locker's sensors are read as soon as the map arrives.
      await eventually(async () => expect((await s.gatewayDevice("6"))?.latch).toBe("unlocked"), 20_000);
      const post = await s.api("POST", `/device/v1/devices/${id("6")}/commands`, { command: "lock" });
      expect(post.statusCode, post.body).toBe(200);
      expect((await commandOutcome(s, post.json().id)).state.value).toBe("SUCCESS");
      expect(s.sim.board("bus0", 1).channel(6).latch).toBe("locked");
      expect((await device(s, "6")).state.value).toBe("LOCKED");
    });
  });
}

describe("a command posted while the broker is down reaches SUCCESS once it is back", () => {
  let site: Site | null = null;
  let mosquitto: Awaited<ReturnType<typeof startPrivateMosquitto>> | null = null;
  afterEach(async () => {
    await site?.stop();
    await mosquitto?.stop();
    site = null;
    mosquitto = null;
  });

  /** Connected, subscribed and announced: the gateway's first status reached the cloud. */
  async function ready(s: Site) {
    await eventually(async () => {
      expect((await s.status()).broker.connected).toBe(true);
      const gw = await gatewayRepository(s.db).find("gw-a1");
      expect(gw?.online).toBe(1);
    }, 20_000);
  }

  it("over the embedded broker (its sessions are lost with it)", { timeout: 90_000 }, async () => {
    site = await startSite({ broker: "aedes", serial: "pty" });
    await ready(site);
    await site.brokerDown();
    await eventually(async () => expect((await site?.status())?.broker.connected).toBe(false), 20_000);
    const post = await site.api("POST", `/device/v1/devices/${id("1")}/commands`, { command: "lock" });
    expect(post.statusCode, post.body).toBe(200);
    expect(post.json().state.value).toBe("NOT_SENT");
    await site.brokerUp();
    const outcome = await commandOutcome(site, post.json().id, 45_000);
    expect(outcome.state).toMatchObject({ value: "SUCCESS" });
    expect(site.sim.board("bus0", 1).channel(1).latch).toBe("locked");
    // Delivered twice perhaps (the cloud's queued copy and the redelivery), actuated once.
    expect(site.sim.board("bus0", 1).received.filter((r) => r.kind === "lock")).toHaveLength(1);
  });

  it("over Mosquitto killed with -9 and started again", { timeout: 90_000 }, async () => {
    mosquitto = await startPrivateMosquitto();
    site = await startSite({ broker: "mosquitto", serial: "pty", brokerUrl: mosquitto.url });
    await ready(site);
    await mosquitto.kill();
    await eventually(async () => expect((await site?.status())?.broker.connected).toBe(false), 20_000);
    const post = await site.api("POST", `/device/v1/devices/${id("1")}/commands`, { command: "lock" });
    expect(post.statusCode, post.body).toBe(200);
    await mosquitto.restart();
    const outcome = await commandOutcome(site, post.json().id, 45_000);
    expect(outcome.state).toMatchObject({ value: "SUCCESS" });
    expect(site.sim.board("bus0", 1).received.filter((r) => r.kind === "lock")).toHaveLength(1);
  });

  it("a command whose delivery deadline passed during the outage is never actuated", {
    timeout: 90_000,
  }, async () => {
    site = await startSite({ broker: "aedes", serial: "pty" });
    await ready(site);
    await site.brokerDown();
    await eventually(async () => expect((await site?.status())?.broker.connected).toBe(false), 20_000);
    const post = await site.api("POST", `/device/v1/devices/${id("2")}/commands`, { command: "lock" });
    site.clock.jump(31_000); // past the 30 s delivery deadline
    const outcome = await commandOutcome(site, post.json().id);
    expect(outcome.state.value).toBe("ERROR");
    await site.brokerUp();
    await ready(site);
    // The gateway is back and announced; nothing was redelivered and the latch never moved.
    const bus1 = site.sim.board("bus0", 1);
    await eventually(async () => expect((await site?.status())?.outbox.pending).toBe(0), 20_000);
    expect(bus1.received.filter((r) => r.kind === "lock")).toHaveLength(0);
    expect(bus1.channel(2).latch).toBe("unlocked");
  });
});
