/**
 * What a session costs, as pure functions of its price list and its billed period (spec: Limits,
 * billing rules). Amounts are decimal strings on the API and integers of the currency's minor unit here,
 * so no fee is ever a float.
 */

/** A price list's terms (docs/decisions/sessions-and-billing.md): a price per started period after free minutes, capped. */
export type PriceTerms = {
  /** ISO 4217 */
  currency: string;
  /** Minutes at the start of a session that cost nothing. */
  free_minutes: number;
  /** Length of one billed period; every started period is charged in full. */
  period_minutes: number;
  /** Price of one period, a decimal string in the currency's units ("1.50"). */
  price_per_period: string;
  /** Most one session costs; null for no cap. */
  max_fee: string | null;
};

export type Fee = { currency: string; value: string };

/** Who the session was identified by: only an identified user is charged (billing rule 2). */
export type Identity = { userId: string | null; identifiedBy: "user" | "rfid" };

export type BillingFacts = Identity & {
  priceList: PriceTerms | null;
  /** Billed period: from the booking or the start, to the end (billing rule 3). */
  from: string;
  to: string;
  /** An operator's forced end without fee. */
  withoutFee: boolean;
};

export type Billing = {
  /** What the rider pays; null when no price list applies. */
  fee: Fee | null;
  chargeable: boolean;
  /** Why it is not charged, for logs and the operator; "" when chargeable. */
  reason: string;
};

/** Sessions shorter than this are not charged (billing rule 3). */
export const MIN_BILLED_MS = 60_000;
const MINUTE_MS = 60_000;

/** Digits of the currency's minor unit (2 for EUR, 0 for JPY), as Intl knows them. */
export function currencyDigits(currency: string): number {
  return new Intl.NumberFormat("en", { style: "currency", currency }).resolvedOptions()
    .maximumFractionDigits as number;
}

/** Whether `amount` is a plain non-negative decimal with no more digits than the currency has. */
export function isAmountOf(amount: string, currency: string): boolean {
  const digits = currencyDigits(currency);
  const pattern = digits === 0 ? /^\d{1,12}$/ : new RegExp(`^\\d{1,12}(\\.\\d{1,${digits}})?$`);
  return pattern.test(amount);
}

export function toMinor(amount: string, digits: number): number {
  const [whole = "0", fraction = ""] = amount.split(".");
  return Number(whole) * 10 ** digits + Number(fraction.padEnd(digits, "0") || "0");
}

export function formatMinor(minor: number, digits: number): string {
  if (digits === 0) return String(minor);
  const s = String(minor).padStart(digits + 1, "0");
  return `${s.slice(0, -digits)}.${s.slice(-digits)}`;
}

/** The fee of a billed period under a price list, before the billing rules decide whether it is charged. */
export function priceOf(terms: PriceTerms, durationMs: number): Fee {
  const digits = currencyDigits(terms.currency);
  const billedMs = Math.max(0, durationMs - terms.free_minutes * MINUTE_MS);
  const periods = Math.ceil(billedMs / (terms.period_minutes * MINUTE_MS));
  let minor = periods * toMinor(terms.price_per_period, digits);
  if (terms.max_fee !== null) minor = Math.min(minor, toMinor(terms.max_fee, digits));
  return { currency: terms.currency, value: formatMinor(minor, digits) };
}

/** The billing rules: a session is charged only when every one holds; otherwise NOT_CHARGED. */
export function billSession(f: BillingFacts): Billing {
  const zero = (terms: PriceTerms): Fee => ({
    currency: terms.currency,
    value: formatMinor(0, currencyDigits(terms.currency)),
  });
  const notCharged = (reason: string): Billing => ({
    fee: f.priceList ? zero(f.priceList) : null,
    chargeable: false,
    reason,
  });
  if (!f.priceList) return notCharged("no price list");
  if (f.userId === null) return notCharged("anonymous session");
  if (f.identifiedBy === "rfid") return notCharged("identified only by an RFID card");
  const durationMs = Date.parse(f.to) - Date.parse(f.from);
  if (durationMs < MIN_BILLED_MS) return notCharged("shorter than 1 minute");
  if (f.withoutFee) return notCharged("ended by the operator without fee");
  const fee = priceOf(f.priceList, durationMs);
  if (toMinor(fee.value, currencyDigits(fee.currency)) === 0) return notCharged("nothing to pay");
  return { fee, chargeable: true, reason: "" };
}
