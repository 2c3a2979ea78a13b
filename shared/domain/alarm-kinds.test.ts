import { describe, expect, it } from "vitest";
import { ALARM_KINDS, ALARM_SEVERITY, subjectKey } from "./alarm-kinds.ts";
import { ALARM_SEVERITIES } from "./alarm-machine.ts";

describe("alarm kinds", () => {
  it("every kind has a severity of the four", () => {
    for (const kind of ALARM_KINDS) expect(ALARM_SEVERITIES, kind).toContain(ALARM_SEVERITY[kind]);
    expect(Object.keys(ALARM_SEVERITY).sort()).toEqual([...ALARM_KINDS].sort());
  });

  it("a subject is named by its kind and id, so a device and a location of one id never meet", () => {
    expect(subjectKey({ kind: "device", id: "x" })).toBe("device:x");
    expect(subjectKey({ kind: "location", id: "x" })).not.toBe(subjectKey({ kind: "gateway", id: "x" }));
  });
});
