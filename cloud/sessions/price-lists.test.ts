import { describe, expect, it } from "vitest";
import { findProblems } from "../manifest/manifest-problems.ts";
import { ManifestPriceList } from "./price-lists.ts";

const OP = "aaaaaaaa-0000-4000-8000-000000000001";
const standard = { code: "standard", name: "Standard", currency: "EUR", price_per_period: "1.50" };

describe("price lists in the site manifest", () => {
  it("fills in no free minutes, hourly periods and no cap", () => {
    expect(ManifestPriceList.parse(standard)).toEqual({
      ...standard,
      free_minutes: 0,
      period_minutes: 60,
      max_fee: null,
    });
  });

  it.each([
    [{ currency: "EURO" }, "currency"],
    [{ price_per_period: "1.505" }, "price_per_period"],
    [{ price_per_period: "-1" }, "price_per_period"],
    [{ currency: "JPY", price_per_period: "1.5" }, "price_per_period"],
    [{ max_fee: "ten" }, "max_fee"],
    [{ period_minutes: 0 }, "period_minutes"],
    [{ free_minutes: -5 }, "free_minutes"],
    [{ code: "has space" }, "code"],
  ])("refuses %j at %s", (patch, key) => {
    const r = ManifestPriceList.safeParse({ ...standard, ...patch });
    expect(r.success).toBe(false);
    expect(r.error?.issues.map((i) => i.path.join("."))).toContain(key);
  });

  it("names a duplicate code and a location or device naming an unknown price list", () => {
    const { problems } = findProblems({
      version: 1,
      operators: [
        {
          id: OP,
          name: "A",
          price_lists: [standard, { ...standard, name: "again" }],
          locations: [
            {
              code: "L1",
              label: "L",
              type: "BIKE_LOCKERS",
              latitude: 1,
              longitude: 1,
              price_list: "standart",
              gateways: [
                {
                  id: "gw-1",
                  secret: "12345678",
                  devices: [{ alias: "1", type: "LOCKER", price_list: "premium" }],
                },
              ],
            },
          ],
        },
      ],
    });
    const messages = problems.map((p) => `${p.path.join(".")}: ${p.message}`);
    expect(messages).toContain(
      'operators.0.price_lists.1.code: duplicate price list code "standard" in this operator',
    );
    expect(messages).toContain(
      'operators.0.locations.0.price_list: no price list with code standart in this operator (did you mean "standard"?)',
    );
    expect(
      messages.some((m) =>
        m.startsWith("operators.0.locations.0.gateways.0.devices.0.price_list: no price list"),
      ),
    ).toBe(true);
  });

  it("reports an unknown key of a price list", () => {
    const { problems } = findProblems({
      version: 1,
      operators: [{ id: OP, name: "A", price_lists: [{ ...standard, prize_per_period: "1" }] }],
    });
    expect(problems.map((p) => p.path.join("."))).toContain("operators.0.price_lists.0.prize_per_period");
  });
});
