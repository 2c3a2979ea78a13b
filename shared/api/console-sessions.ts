import { z } from "zod";
import { SessionsLimit, SessionV2 } from "./session.ts";
import { Uuid } from "./uuid.ts";

/**
 * The console's session record: the v2 record with the device and location it is on, which a staff
 * member reads across riders (the public API addresses a session under its rider instead).
 */
export const ConsoleSession = SessionV2.extend({ device_id: z.string(), location_id: z.string() });
export type ConsoleSession = z.infer<typeof ConsoleSession>;

export const ConsoleSessionList = z.object({
  pagination_token: z.string().nullable(),
  data: z.array(ConsoleSession),
});
export type ConsoleSessionList = z.infer<typeof ConsoleSessionList>;

/** The console's filters: status, device and rider, a page at a time (the v2 list's cursor). */
export const ConsoleSessionsQuery = z.strictObject({
  status: z.enum(["active", "ended", "booked"]).optional(),
  device_id: Uuid.optional(),
  user_id: Uuid.optional(),
  limit: SessionsLimit,
  pagination_token: z.string().min(1).max(500).optional(),
  /** Which operator's sessions a superadmin reads; others read their own operator's. */
  operator_id: z.string().min(1).max(100).optional(),
});
export type ConsoleSessionsQuery = z.infer<typeof ConsoleSessionsQuery>;
