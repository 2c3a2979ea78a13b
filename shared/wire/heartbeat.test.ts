import { describe, expect, it } from "vitest";
import { Heartbeat } from "./messages.ts";

const OLD = {
  gateway_id: "gw-1",
  sent_at: "2026-01-15T10:00:00.000Z",
  devices: [{ device_id: "11111111-1111-4111-8111-111111111111", reachable: true }],
  outbox: { id: "5c3e2a10-7b4d-4f6e-8a9b-0c1d2e3f4a5b", unconfirmed_from: 7 },
};
const NEW = {
  ...OLD,
  outbox: { ...OLD.outbox, depth: 12 },
  runtime: { version: "0.1.0", started_at: "2026-01-12T06:00:00.000Z" },
};

describe("the heartbeat's outbox depth and runtime", () => {
  it("a current gateway's heartbeat carries them", () => {
    expect(Heartbeat.parse(NEW)).toEqual(NEW);
  });

  it("an older gateway's heartbeat, without them, is still valid and says nothing of them", () => {
    const hb = Heartbeat.parse(OLD);
    expect(hb.outbox?.depth).toBeUndefined();
    expect(hb.runtime).toBeUndefined();
    expect(Heartbeat.safeParse({ ...OLD, outbox: undefined }).success).toBe(true);
  });

  it("refuses a depth that is not a count, and a runtime without its version or a timestamp", () => {
    for (const depth of [-1, 1.5, "3", null])
      expect(Heartbeat.safeParse({ ...NEW, outbox: { ...NEW.outbox, depth } }).success, String(depth)).toBe(
        false,
      );
    for (const runtime of [
      { version: "", started_at: NEW.runtime.started_at },
      { version: "x".repeat(65), started_at: NEW.runtime.started_at },
      { version: "0.1.0", started_at: "yesterday" },
      { version: "0.1.0" },
    ])
      expect(Heartbeat.safeParse({ ...NEW, runtime }).success, JSON.stringify(runtime)).toBe(false);
    expect(Heartbeat.parse({ ...NEW, outbox: { ...NEW.outbox, depth: 0 } }).outbox?.depth).toBe(0);
  });
});
