import { describe, expect, it } from "vitest";
import { FakeClock } from "../../test/support/fake-clock.ts";
import { CloudClock, SKEW_BOUND_MS } from "./cloud-clock.ts";

const CLOUD = "2026-01-15T10:00:00.000Z";
const DAY = 24 * 60 * 60 * 1000;
const at = (iso: string, plusMs: number) => new Date(Date.parse(iso) + plusMs).toISOString();

/** The gateway's clock starts at `wall`; the cloud's clock is CLOUD at the same instant. */
function rig(wall = CLOUD) {
  const clock = new FakeClock(wall);
  return { clock, cloud: new CloudClock({ clock, monotonic: clock, syncWaitMs: 5_000 }) };
}

describe("the gateway's estimate of the cloud's clock", () => {
  it("knows nothing before any message carried the cloud's time", () => {
    const { cloud } = rig();
    cloud.observe(undefined);
    expect(cloud.cloudNow()).toBeNull();
    expect(cloud.offsetMs()).toBeNull();
    expect(cloud.isSkewed()).toBe(false);
  });

  it("runs on from a message's sent_at by monotonic time, whatever the wall clock does", () => {
    const { clock, cloud } = rig();
    cloud.observe(CLOUD);
    clock.advance(10_000);
    expect(cloud.cloudNow()?.toISOString()).toBe(at(CLOUD, 10_000));
    clock.setWall(Date.parse(CLOUD) + DAY); // NTP steps the wall clock a day on: the cloud's time does not move
    expect(cloud.cloudNow()?.toISOString()).toBe(at(CLOUD, 10_000));
    expect(cloud.offsetMs()).toBe(10_000 - DAY);
  });

  it("measures a wall clock a day ahead, or behind, and flags it as skewed", () => {
    const ahead = rig(at(CLOUD, DAY));
    ahead.cloud.observe(CLOUD);
    expect(ahead.cloud.offsetMs()).toBe(-DAY);
    expect(ahead.cloud.isSkewed()).toBe(true);
    const behind = rig(at(CLOUD, -DAY));
    behind.cloud.observe(CLOUD);
    expect(behind.cloud.offsetMs()).toBe(DAY);
    expect(behind.cloud.isSkewed()).toBe(true);
  });

  it("does not flag an offset within the bound", () => {
    const { cloud } = rig(at(CLOUD, -SKEW_BOUND_MS));
    cloud.observe(CLOUD);
    expect(cloud.isSkewed()).toBe(false);
  });

  it("keeps the largest bound: an old copy redelivered later cannot pull the estimate back", () => {
    const { clock, cloud } = rig();
    cloud.observe(at(CLOUD, 60_000));
    clock.advance(1_000);
    cloud.observe(CLOUD); // a copy that waited a minute in a broker queue
    expect(cloud.cloudNow()?.toISOString()).toBe(at(CLOUD, 61_000));
  });

  it("moves forward to a newer message's time", () => {
    const { clock, cloud } = rig();
    cloud.observe(CLOUD);
    clock.advance(1_000);
    cloud.observe(at(CLOUD, 31_000)); // the cloud's clock is further on than elapsed time shows
    expect(cloud.cloudNow()?.toISOString()).toBe(at(CLOUD, 31_000));
  });
});

describe("commands after a (re)connect", () => {
  it("are settled at once outside a session's start", async () => {
    const { cloud } = rig();
    await expect(cloud.settled()).resolves.toBeUndefined();
  });

  it("wait for the cloud's answer to this session, which also brings its time", async () => {
    const { clock, cloud } = rig();
    cloud.sessionStarted();
    cloud.observe(at(CLOUD, -3_600_000)); // a command queued an hour ago arrives first
    let settled = false;
    void cloud.settled().then(() => (settled = true));
    await Promise.resolve();
    expect(settled).toBe(false);
    cloud.observe(CLOUD, true);
    await Promise.resolve();
    expect(settled).toBe(true);
    expect(cloud.cloudNow()?.toISOString()).toBe(CLOUD);
    expect(clock.pendingTimers()).toBe(0);
  });

  it("give up waiting after the sync wait when the cloud stamps nothing (an older cloud)", async () => {
    const { clock, cloud } = rig();
    cloud.sessionStarted();
    cloud.observe(undefined); // an older cloud's message
    let settled = false;
    void cloud.settled().then(() => (settled = true));
    clock.advance(4_999);
    await Promise.resolve();
    expect(settled).toBe(false);
    clock.advance(1);
    await Promise.resolve();
    expect(settled).toBe(true);
  });

  it("after a restart, hold stamped commands the broker kept until the cloud answers, however long", async () => {
    const { clock, cloud } = rig();
    cloud.sessionStarted();
    cloud.observe(at(CLOUD, -3_600_000)); // stamped: this cloud answers once it is back
    let settled = false;
    void cloud.settled().then(() => (settled = true));
    clock.advance(60_000);
    await Promise.resolve();
    expect(settled).toBe(false);
    cloud.observe(at(CLOUD, 60_000), true);
    await Promise.resolve();
    expect(settled).toBe(true);
  });

  it("on a reconnect after a fresh answer earlier in this process, give up waiting after the sync wait", async () => {
    const { clock, cloud } = rig();
    cloud.sessionStarted();
    cloud.observe(CLOUD, true);
    cloud.sessionStarted(); // the link dropped and came back; the cloud is away
    cloud.observe(at(CLOUD, -60_000));
    let settled = false;
    void cloud.settled().then(() => (settled = true));
    clock.advance(5_000);
    await Promise.resolve();
    expect(settled).toBe(true);
    expect(cloud.cloudNow()?.toISOString()).toBe(at(CLOUD, 5_000));
  });
});
