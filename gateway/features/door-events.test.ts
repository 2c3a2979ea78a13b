import { EventEmitter } from "node:events";
import pino from "pino";
import { describe, expect, it } from "vitest";
import type { DoorEvents } from "../adapters/hardware/gpio-doors.ts";
import type { MappedDevice } from "../ports.ts";
import { reportDoorEvents } from "./door-events.ts";

const DOOR: MappedDevice = {
  device_id: "d0000000-0000-4000-8000-000000000001",
  type: "BIKE_HOUSE_DOOR",
  alias: "north",
  bus: null,
  has_camera: false,
};
const full = () => {
  throw Object.assign(new Error("database or disk is full"), { code: "SQLITE_FULL" });
};

describe("a GPIO door's reports on a full state store", () => {
  it("each report is kept or lost on its own, and the door's handling goes on", () => {
    const doors = new EventEmitter<DoorEvents>();
    const recorded: string[] = [];
    reportDoorEvents(doors, {
      outbox: { append: full },
      sensors: {
        record: (_d, reading) => {
          recorded.push(JSON.stringify(reading));
          return true;
        },
      },
      log: pino({ level: "silent" }),
    });
    // The event is refused; the reading still goes to the sensors (which owe it when they are refused too).
    expect(() => doors.emit("door", DOOR, true)).not.toThrow();
    expect(recorded).toEqual(['{"door_open":true}']);
  });

  it("a refused reading does not reach the GPIO watcher that reported the contact", () => {
    const doors = new EventEmitter<DoorEvents>();
    reportDoorEvents(doors, {
      outbox: { append: full },
      sensors: { record: full },
      log: pino({ level: "silent" }),
    });
    expect(() => doors.emit("door", DOOR, false)).not.toThrow();
    expect(() => doors.emit("relocked", DOOR, "closed")).not.toThrow();
  });

  it("anything but a full store still fails loudly", () => {
    const doors = new EventEmitter<DoorEvents>();
    const broken = () => {
      throw new Error("SQLITE_CORRUPT");
    };
    reportDoorEvents(doors, {
      outbox: { append: broken },
      sensors: { record: broken },
      log: pino({ level: "silent" }),
    });
    expect(() => doors.emit("door", DOOR, true)).toThrow("SQLITE_CORRUPT");
  });
});
