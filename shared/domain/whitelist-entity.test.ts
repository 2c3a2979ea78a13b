import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { entityStatus } from "./whitelist-entity.ts";

const NOW = new Date("2026-01-15T10:00:00.000Z");

describe("entityStatus", () => {
  it("shows an ACTIVE card without expiry as ACTIVE", () => {
    expect(entityStatus("ACTIVE", null, NOW)).toBe("ACTIVE");
  });

  it("shows an ACTIVE card as EXPIRED from its expires_at on, the instant itself included", () => {
    expect(entityStatus("ACTIVE", "2026-01-15T10:00:00.001Z", NOW)).toBe("ACTIVE");
    expect(entityStatus("ACTIVE", "2026-01-15T10:00:00.000Z", NOW)).toBe("EXPIRED");
    expect(entityStatus("ACTIVE", "2026-01-15T09:59:59.999Z", NOW)).toBe("EXPIRED");
  });

  it("keeps INACTIVE whatever the time (an administrator's decision)", () => {
    fc.assert(
      fc.property(
        fc.option(fc.date({ noInvalidDate: true })),
        fc.date({ noInvalidDate: true }),
        (exp, now) => {
          expect(entityStatus("INACTIVE", exp ? exp.toISOString() : null, now)).toBe("INACTIVE");
        },
      ),
    );
  });

  it("never shows EXPIRED before expires_at, and always from it on", () => {
    fc.assert(
      fc.property(fc.date({ noInvalidDate: true }), fc.date({ noInvalidDate: true }), (exp, now) => {
        const s = entityStatus("ACTIVE", exp.toISOString(), now);
        expect(s).toBe(exp.getTime() <= now.getTime() ? "EXPIRED" : "ACTIVE");
      }),
    );
  });
});
