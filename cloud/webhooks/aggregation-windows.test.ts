import { describe, expect, it } from "vitest";
import { AGGREGATION_WINDOW_MS, type BufferedGroup, closedWindows } from "./aggregation-windows.ts";

const OP = "aaaaaaaa-0000-4000-8000-000000000001";
const start = Date.parse("2026-01-15T10:00:00.000Z");
const group = (type: BufferedGroup["type"], offsetMs: number): BufferedGroup => ({
  operatorId: OP,
  type,
  firstAt: new Date(start + offsetMs).toISOString(),
});

describe("aggregation windows", () => {
  it("are about 1 minute for alarms and 5 minutes for the other types (spec: 1 to 15 minutes)", () => {
    expect(AGGREGATION_WINDOW_MS).toEqual({
      alarm: 60_000,
      connection: 300_000,
      connection_confirmed: 300_000,
      status: 300_000,
    });
  });

  it("close a window when its type's length has passed since the first buffered event", () => {
    const groups = [group("alarm", 0), group("status", 0), group("connection", 0)];
    expect(closedWindows(groups, new Date(start + 59_999))).toEqual([]);
    expect(closedWindows(groups, new Date(start + 60_000))).toEqual([group("alarm", 0)]);
    expect(closedWindows(groups, new Date(start + 299_999))).toEqual([group("alarm", 0)]);
    expect(
      closedWindows(groups, new Date(start + 300_000))
        .map((g) => g.type)
        .sort(),
    ).toEqual(["alarm", "connection", "status"]);
  });

  it("flush the oldest window first", () => {
    const late = group("alarm", 200_000);
    const early = group("status", 0);
    expect(closedWindows([late, early], new Date(start + 400_000))).toEqual([early, late]);
  });
});
