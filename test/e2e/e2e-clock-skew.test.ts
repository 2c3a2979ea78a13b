import { afterEach, describe, expect, it } from "vitest";
import type { CommandRequest } from "../../shared/wire/messages.ts";
import { topicFor } from "../../shared/wire/topics.ts";
import { eventually } from "../support/eventually.ts";
import { fx } from "../support/fixture-site.ts";
import { type Site, startSite } from "../support/site-harness.ts";

const DAY = 24 * 60 * 60 * 1000;
const LOCKER = fx.device("L1", "1"); // board 1, channel 1 on gw-a1's bus0

const lockRequests = (site: Site) =>
  site.sim.board("bus0", 1).received.filter((r) => r.kind === "lock" && r.channel === 1);

async function healthySite(gatewayClockOffsetMs: number): Promise<Site> {
  const site = await startSite({ broker: "aedes", serial: "memory", gatewayClockOffsetMs });
  await eventually(async () => {
    const d = (await site.api("GET", `/device/v1/devices/${LOCKER}`)).json();
    expect(d.heartbeat_v2?.health).toBe("HEALTHY");
  }, 25_000);
  return site;
}

async function settledCommand(site: Site, id: string) {
  const res = await site.api("GET", `/device/v1/commands/${id}`, undefined, { prefer: "wait=25" });
  return res.json();
}

/** What the gateway itself recorded for locker 1's last command, as parkctl shows it. */
const lastCommand = async (site: Site) => (await site.gatewayDevice("1"))?.last_command;

let site: Site | null = null;
afterEach(async () => {
  await site?.stop();
  site = null;
});

describe("a gateway whose wall clock is a day off the cloud's", () => {
  it("a day ahead: executes a command within its deadline, dated on the cloud's clock; doctor and heartbeats show the offset", async () => {
    site = await healthySite(DAY);
    const post = await site.api("POST", `/device/v1/devices/${LOCKER}/commands`, { command: "lock" });
    const done = await settledCommand(site, post.json().id);
    expect(done.state.value).toBe("SUCCESS");
    expect(site.sim.board("bus0", 1).channel(1).latch).toBe("locked");
    // The gateway's report is dated on the cloud's clock, not a day into the future.
    const locked = done.events.find((e: { name: string }) => e.name === "RESPONSE_DEVICE_LOCKED");
    expect(Date.parse(locked.timestamp)).toBeLessThanOrEqual(site.clock.now().getTime());
    expect(Date.parse(locked.timestamp)).toBeGreaterThan(site.clock.now().getTime() - 60_000);

    await eventually(() =>
      expect(site?.heartbeats.last?.clock).toMatchObject({
        offset_ms: expect.toSatisfy((ms: number) => ms <= -DAY && ms > -DAY - 5_000),
        skewed: true,
      }),
    );

    const clock = (await site.gateway.control.doctor()).find((c) => c.check === "clock");
    expect(clock).toMatchObject({
      status: "warn",
      detail: expect.stringMatching(/^the wall clock is 8640\d\.\d s ahead of the cloud's/),
      hint: expect.stringMatching(/NTP/),
    });
  });

  it("a day behind: executes a command within its deadline", async () => {
    site = await healthySite(-DAY);
    const post = await site.api("POST", `/device/v1/devices/${LOCKER}/commands`, { command: "lock" });
    expect((await settledCommand(site, post.json().id)).state.value).toBe("SUCCESS");
    expect(site.sim.board("bus0", 1).channel(1).latch).toBe("locked");
    const clock = (await site.gateway.control.doctor()).find((c) => c.check === "clock");
    expect(clock?.detail).toMatch(/^the wall clock is 8640\d\.\d s behind the cloud's/);
  });

  it("a day behind: refuses a command whose deadline passed while the gateway was stopped", async () => {
    site = await healthySite(-DAY);
    await site.stopGateway();
    const post = await site.api("POST", `/device/v1/devices/${LOCKER}/commands`, { command: "lock" });
    site.clock.jump(31_000); // the cloud's clock passes the delivery deadline
    expect((await settledCommand(site, post.json().id)).state.value).toBe("ERROR");
    // The broker kept the command for the gateway's session: it arrives first, with its old sent_at, and
    // by the gateway's wall clock it still has a day to run.
    await site.startGateway();
    await eventually(
      async () =>
        expect(await lastCommand(site as Site)).toMatchObject({
          command_id: post.json().id,
          result: "ERROR",
          reason: expect.stringMatching(/after its deadline/),
        }),
      10_000,
    );
    expect(lockRequests(site)).toHaveLength(0);
    expect(site.sim.board("bus0", 1).channel(1).latch).toBe("unlocked");
  });

  it("a day behind: refuses a command already past its deadline on the cloud's clock when it arrives", async () => {
    site = await healthySite(-DAY);
    const cloudNow = site.clock.now().getTime();
    // As a cloud whose clock jumped past the deadline publishes it (or a partition held it that long).
    const stale: CommandRequest = {
      command_id: "5ca1ab1e-0000-4000-8000-000000000001",
      device_id: LOCKER,
      name: "lock",
      params: {},
      issued_at: new Date(cloudNow - 60_000).toISOString(),
      expires_at: new Date(cloudNow - 30_000).toISOString(),
      sent_at: new Date(cloudNow).toISOString(),
    };
    await site.link.client.publishAsync(topicFor(site.prefix, "gw-a1", "cmd"), JSON.stringify(stale), {
      qos: 1,
    });
    await eventually(
      async () =>
        expect(await lastCommand(site as Site)).toMatchObject({
          command_id: stale.command_id,
          result: "ERROR",
        }),
      10_000,
    );
    expect(lockRequests(site)).toHaveLength(0);
    expect(site.sim.board("bus0", 1).channel(1).latch).toBe("unlocked");
  });
});
