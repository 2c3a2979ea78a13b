import { describe, expect, it } from "vitest";
import { DeviceRegistry } from "../../gateway/devices/device-registry.ts";
import { createHeartbeat } from "../../gateway/features/heartbeat.ts";
import { CEILING_TTL_MS, CloudClock } from "../../gateway/time/cloud-clock.ts";
import type { Heartbeat } from "../../shared/wire/messages.ts";
import { FakeClock } from "../support/fake-clock.ts";

const CLOUD = "2026-01-15T10:00:00.000Z";

/** A heartbeat over a broker that keeps what it was given, with the gateway's estimate of the cloud's clock. */
function rig() {
  const clock = new FakeClock(CLOUD);
  const cloudTime = new CloudClock({ clock, monotonic: clock });
  const sent: Heartbeat[] = [];
  const heartbeat = createHeartbeat({
    gatewayId: "gw-1",
    broker: { publishHeartbeat: (hb) => sent.push(hb) > 0, on: () => {}, off: () => {} },
    registry: new DeviceRegistry(),
    monitors: [],
    clock,
    intervalMs: 5_000,
    cloudTime,
  });
  return { clock, cloudTime, sent, heartbeat };
}

describe("heartbeats probe the cloud's time", () => {
  it("carry a probe until an echo bounds the cloud's time from above, then none until it ages", () => {
    const { clock, cloudTime, sent, heartbeat } = rig();
    heartbeat.beat();
    const probe = sent[0]?.sync;
    expect(probe).toEqual(expect.any(String));
    clock.advance(100);
    cloudTime.observe(new Date(Date.parse(CLOUD) + 50).toISOString(), false, probe); // the cloud's echo
    expect(cloudTime.cloudLatestMs()).toBe(Date.parse(CLOUD) + 150 + 100 * 1e-4);
    heartbeat.beat();
    expect(sent[1]?.sync).toBeUndefined();
    clock.advance(CEILING_TTL_MS / 2);
    heartbeat.beat();
    expect(sent[2]?.sync).toEqual(expect.any(String));
    expect(sent[2]?.sync).not.toBe(probe);
  });
});
