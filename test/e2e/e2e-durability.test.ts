import { afterEach, describe, expect, it } from "vitest";
import { hardwareReportRepository } from "../../cloud/gateway-link/hardware-report-repository.ts";
import { eventually } from "../support/eventually.ts";
import { fx } from "../support/fixture-site.ts";
import { startPrivateMosquitto } from "../support/private-mosquitto.ts";
import { type Site, startSite } from "../support/site-harness.ts";

const LOCKER = fx.device("L1", "1");

/** Hardware events the cloud has applied for gw-a1, by sequence number. */
async function appliedEvents(site: Site) {
  return (await hardwareReportRepository(site.db).eventsOf("gw-a1"))
    .map(({ seq, event, source }) => ({ seq, event, source }))
    .sort((a, b) => a.seq - b.seq);
}

/** Board events: each one goes up through the gateway's outbox. */
function tamper(site: Site, times: number) {
  const board = site.sim.board("bus0", 1);
  for (let i = 0; i < times; i++) board.event(2, i % 2 === 0 ? "door_opened" : "door_closed");
}

/** Connected to the broker, and the lock board answers: events fired now reach the gateway. */
async function ready(site: Site) {
  await eventually(async () => {
    const status = await site.status();
    expect(status.broker.connected).toBe(true);
    expect(status.buses[0]?.boards.find((b) => b.addr === 1)?.reachable).toBe(true);
  }, 20_000);
}

/**
 * Every event exactly once. After a broker restart without persistence the gateway may resend before the
 * cloud has subscribed again, and those copies are lost in the broker; the rows stay in the outbox until the
 * cloud confirms them, so they come again at the next resend (1–2 s in the harness) or when the cloud asks.
 * The ceiling is only there so a real loss fails instead of hanging.
 */
async function expectEverythingOnce(site: Site, count: number) {
  await eventually(async () => {
    const events = (await appliedEvents(site)).filter((e) => e.source === "bus0/1/2");
    expect(events).toHaveLength(count);
    expect(new Set(events.map((e) => e.seq)).size).toBe(count);
  }, 30_000);
  await eventually(async () => expect((await site.status()).outbox.pending).toBe(0), 30_000);
}

describe("a broker restart in the middle loses nothing", () => {
  let site: Site | null = null;
  let mosquitto: Awaited<ReturnType<typeof startPrivateMosquitto>> | null = null;
  afterEach(async () => {
    await site?.stop();
    await mosquitto?.stop();
    site = null;
    mosquitto = null;
  });

  it("over the embedded broker: events from before, during and after the outage arrive exactly once", {
    timeout: 60_000,
  }, async () => {
    site = await startSite({ broker: "aedes", serial: "pty" });
    await ready(site);
    tamper(site, 3);
    await site.brokerDown();
    await eventually(async () => expect((await site?.status())?.broker.connected).toBe(false));
    tamper(site, 3);
    await eventually(async () => expect((await site?.status())?.outbox.pending).toBeGreaterThanOrEqual(3));
    await site.brokerUp();
    tamper(site, 3);
    await expectEverythingOnce(site, 9);
    // And commands flow again after the restart.
    const post = await site.api("POST", `/device/v1/devices/${LOCKER}/commands`, { command: "lock" });
    const state = await eventually(async () => {
      const s = (await site?.api("GET", `/device/v1/commands/${post.json().id}`))?.json().state;
      expect(["SUCCESS", "ERROR"]).toContain(s.value);
      return s;
    }, 15_000);
    expect(state).toMatchObject({ value: "SUCCESS", reason: "" });
  });

  it("over Mosquitto killed with -9 and started again: events arrive exactly once", {
    timeout: 60_000,
  }, async () => {
    mosquitto = await startPrivateMosquitto();
    site = await startSite({ broker: "mosquitto", serial: "pty", brokerUrl: mosquitto.url });
    await ready(site);
    tamper(site, 4);
    await mosquitto.kill();
    tamper(site, 4);
    await eventually(async () => expect((await site?.status())?.broker.connected).toBe(false));
    await mosquitto.restart();
    tamper(site, 4);
    await expectEverythingOnce(site, 12);
  });
});
