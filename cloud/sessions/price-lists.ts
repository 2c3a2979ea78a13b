import { z } from "zod";
import type { PriceList } from "../../shared/api/session.ts";
import { priceListUri } from "../../shared/api/uris.ts";
import type { Executor } from "../store/db.ts";
import { isAmountOf, type PriceTerms } from "./billing.ts";
import { type PriceListFields, type PriceListRow, priceListRepository } from "./price-list-repository.ts";

const CURRENCIES: ReadonlySet<string> = new Set(Intl.supportedValuesOf("currency"));

/**
 * A price list as the site manifest declares it, per operator; locations and devices name it by `code`
 * (docs/decisions/sessions-and-billing.md).
 */
export const ManifestPriceList = z
  .strictObject({
    code: z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$/, "letters, digits, '_' and '-', at most 32"),
    id: z
      .uuid()
      .toLowerCase()
      .optional()
      .describe("Stable id; derived from the operator and code when omitted"),
    name: z.string().min(1),
    currency: z
      .string()
      .refine((c) => CURRENCIES.has(c), "an ISO 4217 currency code such as EUR")
      .describe("ISO 4217"),
    free_minutes: z.number().int().min(0).default(0).describe("Minutes at the start that cost nothing"),
    period_minutes: z.number().int().min(1).default(60).describe("Every started period is charged in full"),
    price_per_period: z.string().describe('Decimal text in the currency\'s units, e.g. "1.50"'),
    max_fee: z.string().nullable().default(null).describe("Most one session costs; null for no cap"),
  })
  .superRefine((p, ctx) => {
    if (!CURRENCIES.has(p.currency)) return;
    for (const key of ["price_per_period", "max_fee"] as const) {
      const amount = p[key];
      if (amount !== null && !isAmountOf(amount, p.currency))
        ctx.addIssue({
          code: "custom",
          path: [key],
          message: `must be a non-negative amount in ${p.currency} with at most its minor-unit digits`,
        });
    }
  });
export type ManifestPriceList = z.infer<typeof ManifestPriceList>;

export function termsOf(row: PriceListRow): PriceTerms {
  const { currency, free_minutes, period_minutes, price_per_period, max_fee } = row;
  return { currency, free_minutes, period_minutes, price_per_period, max_fee };
}

export function presentPriceList(row: PriceListRow): PriceList {
  return { id: row.id, uri: priceListUri(row.id), name: row.name, ...termsOf(row) };
}

/**
 * Writes an operator's price lists as the manifest declares them (inside apply's transaction) and returns
 * their ids by code. Never deletes: sessions keep referring to the list they were priced with.
 */
export async function declarePriceLists(
  trx: Executor,
  at: { operatorId: string; ts: string; idOf: (code: string) => string },
  lists: readonly ManifestPriceList[],
): Promise<{ ids: Map<string, string>; created: number; updated: number }> {
  const out = { ids: new Map<string, string>(), created: 0, updated: 0 };
  const priceLists = priceListRepository(trx);
  for (const l of lists) {
    const id = l.id ?? at.idOf(l.code);
    out.ids.set(l.code, id);
    const fields: PriceListFields = {
      operator_id: at.operatorId,
      code: l.code,
      name: l.name,
      currency: l.currency,
      free_minutes: l.free_minutes,
      period_minutes: l.period_minutes,
      price_per_period: l.price_per_period,
      max_fee: l.max_fee,
    };
    const existing = await priceLists.find(id);
    if (!existing) {
      await priceLists.insert({ id, ...fields, created_at: at.ts, updated_at: at.ts });
      out.created++;
      continue;
    }
    if (existing.operator_id !== at.operatorId)
      throw new Error(`price list ${id}: the id belongs to another operator's price list`);
    if (Object.entries(fields).every(([k, v]) => existing[k as keyof typeof fields] === v)) continue;
    await priceLists.update(id, fields, at.ts);
    out.updated++;
  }
  return out;
}
