import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  type BillingFacts,
  billSession,
  currencyDigits,
  formatMinor,
  isAmountOf,
  type PriceTerms,
  priceOf,
  toMinor,
} from "./billing.ts";

const MIN = 60_000;
const EUR: PriceTerms = {
  currency: "EUR",
  free_minutes: 15,
  period_minutes: 60,
  price_per_period: "1.50",
  max_fee: "10.00",
};
const T0 = Date.parse("2026-01-15T10:00:00.000Z");
const facts = (ms: number, over: Partial<BillingFacts> = {}): BillingFacts => ({
  userId: "u",
  identifiedBy: "user",
  priceList: EUR,
  from: new Date(T0).toISOString(),
  to: new Date(T0 + ms).toISOString(),
  withoutFee: false,
  ...over,
});

describe("fees", () => {
  it("costs nothing within the free minutes, then each started period in full, up to the cap", () => {
    expect(priceOf(EUR, 15 * MIN).value).toBe("0.00");
    expect(priceOf(EUR, 15 * MIN + 1).value).toBe("1.50");
    expect(priceOf(EUR, 75 * MIN).value).toBe("1.50");
    expect(priceOf(EUR, 75 * MIN + 1).value).toBe("3.00");
    expect(priceOf(EUR, 100 * 60 * MIN).value).toBe("10.00");
    expect(priceOf({ ...EUR, max_fee: null }, 100 * 60 * MIN + 15 * MIN).value).toBe("150.00");
  });

  it("knows the currency's minor unit", () => {
    expect(currencyDigits("EUR")).toBe(2);
    expect(currencyDigits("JPY")).toBe(0);
    expect(priceOf({ ...EUR, currency: "JPY", price_per_period: "200", max_fee: null }, 20 * MIN)).toEqual({
      currency: "JPY",
      value: "200",
    });
    expect(isAmountOf("1.5", "EUR")).toBe(true);
    expect(isAmountOf("1.505", "EUR")).toBe(false);
    expect(isAmountOf("1.5", "JPY")).toBe(false);
    expect(isAmountOf("-1", "EUR")).toBe(false);
  });

  it("minor units round-trip through their decimal text", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 10 ** 12 }), fc.constantFrom(0, 2, 3), (minor, digits) => {
        expect(toMinor(formatMinor(minor, digits), digits)).toBe(minor);
      }),
    );
  });

  it("never exceeds the cap and never decreases as the session gets longer", () => {
    fc.assert(
      fc.property(fc.nat(10 ** 9), fc.nat(10 ** 9), (a, b) => {
        const [short, long] = a <= b ? [a, b] : [b, a];
        const fee = (ms: number) => toMinor(priceOf(EUR, ms).value, 2);
        expect(fee(short)).toBeLessThanOrEqual(fee(long));
        expect(fee(long)).toBeLessThanOrEqual(1000);
      }),
    );
  });
});

describe("billing rules", () => {
  it("charges an identified user's session of at least a minute under a price list", () => {
    expect(billSession(facts(30 * MIN))).toEqual({
      fee: { currency: "EUR", value: "1.50" },
      chargeable: true,
      reason: "",
    });
  });

  it.each([
    ["no price list", { priceList: null }, 2 * 60 * MIN, null],
    ["anonymous session", { userId: null }, 2 * 60 * MIN, "0.00"],
    ["identified only by an RFID card", { identifiedBy: "rfid" as const }, 2 * 60 * MIN, "0.00"],
    ["shorter than 1 minute", { priceList: { ...EUR, free_minutes: 0 } }, MIN - 1, "0.00"],
    ["ended by the operator without fee", { withoutFee: true }, 2 * 60 * MIN, "0.00"],
    ["nothing to pay", {}, 10 * MIN, "0.00"],
  ] as const)("does not charge: %s", (reason, over, ms, value) => {
    const b = billSession(facts(ms, over));
    expect(b.chargeable).toBe(false);
    expect(b.reason).toBe(reason);
    expect(b.fee?.value ?? null).toBe(value);
  });

  it("a session of exactly one minute is charged", () => {
    expect(billSession(facts(MIN, { priceList: { ...EUR, free_minutes: 0 } })).chargeable).toBe(true);
  });
});
