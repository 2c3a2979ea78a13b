import { describe, expect, it } from "vitest";
import { fromJson, type Json, toJson } from "../store/json-column.ts";
import type { ReadingMarks } from "../store/tables/reading-marks.ts";
import { freshReading, openedLater } from "./reading-order.ts";

const marks = (m: ReadingMarks) => toJson(m);
const AT = "2030-01-01T00:00:00.000Z";

describe("sensor readings in outbox order", () => {
  it("takes every field of the first report and marks it with the report's seq", () => {
    const r = freshReading(null, { source: "gw-1", seq: 5 }, { lock_state: "LOCKED", sensors_at: AT });
    expect(r.fresh).toEqual({ lock_state: "LOCKED", sensors_at: AT });
    expect(r.stale).toEqual([]);
    expect(fromJson(r.marks as Json<ReadingMarks>)).toEqual({ source: "gw-1", seq: { lock_state: 5 } });
  });

  it("drops only the fields a later report has set, and keeps the later marks", () => {
    const stored = marks({ source: "gw-1", seq: { door_open: 9, lock_state: 3 } });
    const r = freshReading(
      stored,
      { source: "gw-1", seq: 7 },
      { lock_state: "UNLOCKED", door_open: false, item_present: true, sensors_at: AT },
    );
    expect(r.fresh).toEqual({ lock_state: "UNLOCKED", item_present: true, sensors_at: AT });
    expect(r.stale).toEqual(["door_open"]);
    expect(fromJson(r.marks as Json<ReadingMarks>)).toEqual({
      source: "gw-1",
      seq: { door_open: 9, lock_state: 7, item_present: 7 },
      opened: 7,
    });
  });

  it("keeps an opening a later lock reading overtook: a report before it learns the latch was opened since", () => {
    const stored = marks({ source: "gw-1", seq: { lock_state: 9 } });
    const r = freshReading(stored, { source: "gw-1", seq: 7 }, { lock_state: "UNLOCKED", sensors_at: AT });
    expect(r.fresh).toEqual({});
    expect(r.stale).toEqual(["lock_state"]);
    expect(fromJson(r.marks as Json<ReadingMarks>)).toEqual({
      source: "gw-1",
      seq: { lock_state: 9 },
      opened: 7,
    });
    expect([5, 7, 8].map((seq) => openedLater(r.marks, { source: "gw-1", seq }))).toEqual([
      true,
      false,
      false,
    ]);
    expect(openedLater(r.marks, { source: "gw-2", seq: 5 })).toBe(false);
    // An older opening moves nothing.
    expect(freshReading(r.marks, { source: "gw-1", seq: 6 }, { lock_state: "UNLOCKED" }).marks).toBeNull();
  });

  it("a report older in every field changes nothing, not even when the sensors were read", () => {
    const stored = marks({ source: "gw-1", seq: { sleep_state: 4 } });
    const r = freshReading(stored, { source: "gw-1", seq: 2 }, { sleep_state: "", sensors_at: AT });
    expect(r).toEqual({ fresh: {}, stale: ["sleep_state"], marks: null });
  });

  it("a new sequence (another gateway, an outbox begun again) starts afresh", () => {
    const stored = marks({ source: "gw-1", seq: { lock_state: 900 } });
    const r = freshReading(stored, { source: "gw-2", seq: 1 }, { lock_state: "LOCKED" });
    expect(r.fresh).toEqual({ lock_state: "LOCKED" });
    expect(fromJson(r.marks as Json<ReadingMarks>)).toEqual({ source: "gw-2", seq: { lock_state: 1 } });
  });

  it("leaves a reading without a position, or without ordered fields, as it is", () => {
    expect(freshReading(null, undefined, { lock_state: "LOCKED" })).toEqual({
      fresh: { lock_state: "LOCKED" },
      stale: [],
      marks: null,
    });
    expect(freshReading(null, { source: "gw-1", seq: 1 }, { sensors_at: AT }).marks).toBeNull();
  });
});
