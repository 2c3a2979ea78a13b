import { describe, expect, it } from "vitest";
import { FakeClock } from "../../test/support/fake-clock.ts";
import { CEILING_TTL_MS, CloudClock, SKEW_BOUND_MS } from "./cloud-clock.ts";

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

  it("after a restart, keep waiting past the sync wait when nothing arrived: held messages are silent too", async () => {
    const { clock, cloud } = rig();
    cloud.sessionStarted();
    let settled = false;
    void cloud.settled().then(() => (settled = true));
    clock.advance(8_000); // every message to this gateway is held on its way
    cloud.observe(CLOUD); // then a stamped command arrives: only the cloud's answer can date it
    await Promise.resolve();
    expect(settled).toBe(false);
    cloud.observe(at(CLOUD, 8_000), true);
    await Promise.resolve();
    expect(settled).toBe(true);
  });

  it("stop waiting once a message without sent_at shows an older cloud, even after the sync wait", async () => {
    const { clock, cloud } = rig();
    cloud.sessionStarted();
    let settled = false;
    void cloud.settled().then(() => (settled = true));
    clock.advance(8_000);
    await Promise.resolve();
    expect(settled).toBe(false);
    cloud.observe(undefined);
    await Promise.resolve();
    expect(settled).toBe(true);
  });

  it("take the echo of a heartbeat probe made in this session as the session's answer; not one made before", async () => {
    const { clock, cloud } = rig();
    const before = cloud.probe();
    clock.advance(100);
    cloud.sessionStarted();
    let settled = false;
    void cloud.settled().then(() => (settled = true));
    clock.advance(30_000); // the session's echo never came: the next probe may go
    const during = cloud.probe();
    expect(during).toBeDefined();
    clock.advance(1_000);
    cloud.observe(CLOUD, false, before);
    await Promise.resolve();
    expect(settled).toBe(false);
    cloud.observe(at(CLOUD, 900), false, during);
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

describe("the latest the cloud's time can be (what deadlines are judged on)", () => {
  /** The upper bound, in ms after CLOUD. */
  const latest = (cloud: CloudClock) => (cloud.cloudLatestMs() ?? Number.NaN) - Date.parse(CLOUD);
  /** The bound is `ms` widened by its drift allowance: 100 ppm of its age, under 2 ms in these tests. */
  const expectNear = (cloud: CloudClock, ms: number) => {
    expect(latest(cloud)).toBeGreaterThanOrEqual(ms);
    expect(latest(cloud)).toBeLessThan(ms + 2);
  };

  it("is unknown from one-way messages alone, however many", () => {
    const { clock, cloud } = rig();
    cloud.observe(CLOUD);
    clock.advance(1_000);
    cloud.observe(at(CLOUD, 1_000));
    expect(cloud.cloudLatestMs()).toBeNull();
  });

  it("is the session's echo plus the whole round trip: a late echo widens it, never the lower bound", () => {
    const { clock, cloud } = rig();
    cloud.sessionStarted();
    clock.advance(1_000); // `online` on its way; the cloud stamps its echo CLOUD + 1 s on hearing it
    const stamped = at(CLOUD, 1_000);
    clock.advance(3_000); // and the echo is held 3 s on its way back
    cloud.observe(stamped, true);
    expect(cloud.cloudNow()?.toISOString()).toBe(stamped); // the cloud's now is at least its stamp
    expectNear(cloud, 5_000); // and at most the stamp plus the whole 4 s round trip
    clock.advance(10_000);
    expectNear(cloud, 15_000);
  });

  it("keeps the tighter of two round trips, and takes a heartbeat probe's echo as one", () => {
    const { clock, cloud } = rig(); // the cloud's time is CLOUD + the monotonic time here
    cloud.sessionStarted();
    clock.advance(8_000);
    cloud.observe(at(CLOUD, 7_900), true); // `online` took 7.9 s to arrive: an 8 s round trip, wide
    expectNear(cloud, 15_900);
    const token = cloud.probe(); // so the next heartbeat asks again
    expect(token).toBeDefined();
    clock.advance(200);
    cloud.observe(at(CLOUD, 8_100), false, token); // a 0.2 s round trip
    expectNear(cloud, 8_300);
    cloud.observe(at(CLOUD, 8_100), false, token); // an echo answered twice counts once
    cloud.observe(at(CLOUD, 8_100), false, "a token never sent");
    cloud.sessionStarted();
    clock.advance(5_000);
    cloud.observe(at(CLOUD, 13_100), true); // a reconnect's slower round trip does not widen it
    expectNear(cloud, 13_300);
    expect(cloud.probe()).toBeUndefined(); // tight and young: nothing to ask
  });

  it("is probed at most every 30 s, and not while the session's own echo may be on its way", () => {
    const { clock, cloud } = rig();
    cloud.sessionStarted();
    expect(cloud.probe()).toBeUndefined(); // the echo is due
    clock.advance(5_000);
    const first = cloud.probe();
    expect(first).toBeDefined();
    clock.advance(29_999);
    expect(cloud.probe()).toBeUndefined();
    clock.advance(1);
    expect(cloud.probe()).toBeDefined();
  });

  it("is trusted for CEILING_TTL_MS; heartbeats probe again from half of that", () => {
    const { clock, cloud } = rig();
    cloud.sessionStarted();
    cloud.observe(CLOUD, true);
    expect(cloud.probe()).toBeUndefined();
    clock.advance(CEILING_TTL_MS / 2);
    const token = cloud.probe();
    expect(token).toBeDefined();
    clock.advance(CEILING_TTL_MS / 2 + 1); // the probe went unanswered
    expect(cloud.cloudLatestMs()).toBeNull();
    cloud.observe(at(CLOUD, CEILING_TTL_MS - 5_000), false, token); // answered at last: valid from its sending
    expect(latest(cloud)).toBeGreaterThanOrEqual(CEILING_TTL_MS + 1);
  });
});
