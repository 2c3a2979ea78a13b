import { z } from "zod";
import { PAYMENT_STATUSES } from "../domain/payment-machine.ts";
import { SESSION_STATUSES } from "../domain/session-machine.ts";
import { Reference } from "./common.ts";
import { Uuid } from "./uuid.ts";

/** Sessions v2 list: at most this many per page (documented; more is a 400). */
export const MAX_SESSIONS_LIMIT = 100;
export const DEFAULT_SESSIONS_LIMIT = 20;
/** Sessions v1 list (deprecated): page_size default 100 (spec: Limits), at most 100. */
export const MAX_V1_PAGE_SIZE = 100;

const Fee = z
  .object({
    currency: z.string().describe("ISO 4217"),
    value: z.string().describe('Decimal text, e.g. "4.50"'),
  })
  .describe("What the rider pays; null while the session is open and when no price list applies");
const Rating = z.object({ rating: z.string(), comment: z.string() });
const SessionEventV2 = z.object({
  name: z.enum(["book", "start", "end", "pause", "resume"]),
  timestamp: z.string(),
});
const Storage = z.object({ location: Reference, device: Reference });
const Travel = z
  .object({
    start_location: z.object({}),
    end_location: z.object({}),
    rental_device: z.object({}),
    rental_fleet: z.object({}),
    seconds_paused: z.number(),
    seconds_active: z.number(),
    battery_used: z.number(),
    distance_travelled: z.number(),
  })
  .describe("Micromobility rental metadata; null for parking sessions");

export const SessionV2 = z
  .object({
    id: z.uuid(),
    uri: z.string(),
    user_id: z.string(),
    access_key_id: z.string().nullable().describe("null if no access key"),
    status: z.enum(SESSION_STATUSES),
    booked_time: z.string().nullable().describe("null if no booking"),
    booked_until_time: z.string().nullable().describe("Booking expiry; null if no booking"),
    start_time: z.string().nullable().describe("null if not started"),
    end_time: z.string().nullable().describe("null if not ended"),
    fee: Fee.nullable(),
    payment: z
      .object({ id: z.uuid(), status: z.enum(PAYMENT_STATUSES) })
      .nullable()
      .describe("Set when the session ends; null while it is open"),
    rating: Rating.nullable(),
    storage: Storage,
    travel: Travel.nullable(),
    auxiliary_devices: z.array(Reference),
    events: z.array(SessionEventV2),
  })
  .meta({ id: "SessionV2" });
export type SessionV2 = z.infer<typeof SessionV2>;

export const SessionV2List = z
  .object({
    pagination_token: z.string().nullable().describe("Cursor of the next page; null on the last page"),
    data: z.array(SessionV2),
  })
  .meta({ id: "SessionV2List" });
export type SessionV2List = z.infer<typeof SessionV2List>;

export const SessionV1 = z
  .object({
    access_key_id: z.string().nullable(),
    user_id: z.string(),
    start_time: z.string().nullable().describe("When the device was locked"),
    end_time: z.string().nullable().describe("When the device was unlocked"),
    fee: Fee.nullable(),
    rating: Rating.nullable(),
    location: Reference,
    device: Reference,
    payment: z.object({ id: z.uuid(), uri: z.string(), status: z.enum(PAYMENT_STATUSES) }).nullable(),
    events: z.array(z.object({ name: z.enum(["book", "start", "end"]), timestamp: z.string() })),
    uri: z.string(),
  })
  .meta({ id: "SessionV1" });
export type SessionV1 = z.infer<typeof SessionV1>;

export const SessionV1List = z.object({ data: z.array(SessionV1) }).meta({ id: "SessionV1List" });

/** A payment of a session (the `uri` of a v1 session's payment). */
export const Payment = z
  .object({
    id: z.uuid(),
    uri: z.string(),
    status: z.enum(PAYMENT_STATUSES),
    fee: Fee.nullable(),
    session: Reference,
  })
  .meta({ id: "Payment" });
export type Payment = z.infer<typeof Payment>;

export const PriceList = z
  .object({
    id: z.uuid(),
    uri: z.string(),
    name: z.string(),
    currency: z.string().describe("ISO 4217"),
    free_minutes: z.number().int().describe("Minutes at the start of a session that cost nothing"),
    period_minutes: z
      .number()
      .int()
      .describe("Length of a billed period; each started period is charged in full"),
    price_per_period: z.string().describe("Decimal text in the currency's units"),
    max_fee: z.string().nullable().describe("Most one session costs; null for no cap"),
  })
  .meta({ id: "PriceList" });
export type PriceList = z.infer<typeof PriceList>;

/** YYYY-MM-DD, a real calendar date (UTC days). */
export const DateOnly = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/, "must be a date YYYY-MM-DD")
  .refine((s) => {
    const d = new Date(`${s}T00:00:00.000Z`);
    return !Number.isNaN(d.getTime()) && d.toISOString().startsWith(s);
  }, "must be a real calendar date");

const from = DateOnly.optional().describe("First day (UTC), inclusive");
const to = DateOnly.optional().describe("Last day (UTC), inclusive");
/** A sessions list's page size, as the query string gives it (the v2 list and the console's list). */
export const SessionsLimit = z
  .string()
  .regex(/^\d+$/, "must be a whole number")
  .transform(Number)
  .pipe(z.number().int().min(1).max(MAX_SESSIONS_LIMIT))
  .optional()
  .describe(`1–${MAX_SESSIONS_LIMIT}; default ${DEFAULT_SESSIONS_LIMIT}`);

const fromBeforeTo = (q: { from?: string; to?: string }) => !q.from || !q.to || q.from <= q.to;
const FROM_AFTER_TO = { message: "from must not be after to", path: ["from"] };

export const SessionsV2Query = z
  .strictObject({
    user_id: Uuid.optional().describe("Only this user's sessions (an external user sees only their own)"),
    limit: SessionsLimit,
    pagination_token: z
      .string()
      .min(1)
      .max(500)
      .optional()
      .describe("The pagination_token of the previous page, with the same filters"),
    location_id: Uuid.optional(),
    status: z
      .enum(["active", "ended", "booked"])
      .optional()
      .describe("active: filtered by start time; ended: by end time; booked: by booking time"),
    from,
    to,
  })
  .refine(fromBeforeTo, FROM_AFTER_TO);
export type SessionsV2Query = z.infer<typeof SessionsV2Query>;

export const SessionsV1Query = z
  .strictObject({
    location_id: Uuid.optional(),
    page: z
      .string()
      .regex(/^\d+$/, "must be a whole number")
      .transform(Number)
      .pipe(z.number().int().min(1).max(1_000_000))
      .optional()
      .describe("Default 1"),
    page_size: z
      .string()
      .regex(/^\d+$/, "must be a whole number")
      .transform(Number)
      .pipe(z.number().int().min(1).max(MAX_V1_PAGE_SIZE))
      .optional()
      .describe(`Default 100, at most ${MAX_V1_PAGE_SIZE}`),
    from,
    to,
    active: z
      .enum(["true", "false"])
      .optional()
      .describe("true: active sessions only (by start time); false (default): ended only (by end time)"),
  })
  .refine(fromBeforeTo, FROM_AFTER_TO);
export type SessionsV1Query = z.infer<typeof SessionsV1Query>;
