import { z } from "zod";
import { CommandEvent, FORCE_UNLOCK_REASONS } from "./command.ts";
import { Device } from "./device.ts";

/**
 * What the console's device routes take and answer (cloud/http/routes/console-devices.ts), typed once for
 * the cloud that builds it (cloud/console/device-timeline.ts) and the console's device page, which imports
 * only the types (its bundle stays free of zod).
 */

/** One thing that happened at a device, as the cloud stored it; `at` orders the timeline. */
export const TimelineEntry = z.discriminatedUnion("kind", [
  z.object({
    kind: z.literal("command"),
    at: z.string(),
    id: z.string(),
    name: z.string(),
    state: z.object({ value: z.string(), reason: z.string() }),
    /** The API client, rider or staff member who sent it. */
    requested_by: z.string(),
    reason: z.string().nullable(),
    comment: z.string().nullable(),
    events: z.array(CommandEvent),
  }),
  z.object({
    kind: z.literal("state_change"),
    at: z.string(),
    from: z.string(),
    to: z.string(),
    lock_state: z.string(),
    /** Why the gateway reported, and its detail (a technician's name and reason). */
    cause: z.string(),
    detail: z.string(),
  }),
  z.object({
    kind: z.literal("audit"),
    at: z.string(),
    /** `email`: a staff member's, when the account is still there. */
    actor: z.object({ kind: z.string(), id: z.string(), email: z.string().optional() }),
    action: z.string(),
    reason: z.string().nullable(),
    comment: z.string().nullable(),
  }),
  z.object({
    kind: z.literal("session"),
    at: z.string(),
    id: z.string(),
    status: z.string(),
    user_id: z.string(),
    access_key_id: z.string().nullable(),
    start_time: z.string().nullable(),
    end_time: z.string().nullable(),
    ended_by: z.string().nullable(),
  }),
  z.object({
    kind: z.literal("access"),
    at: z.string(),
    card_id: z.string(),
    reader: z.string(),
    granted: z.boolean(),
    action: z.string(),
    reason: z.string(),
    decided_by: z.string(),
  }),
]);
export type TimelineEntry = z.infer<typeof TimelineEntry>;

/** GET /console/api/devices/{id}: the device as the public API answers it, and its timeline, newest first. */
export const ConsoleDevicePage = z.object({ device: Device, timeline: z.array(TimelineEntry) });
export type ConsoleDevicePage = z.infer<typeof ConsoleDevicePage>;

/** The operator functions the console offers on a device; their fields are the public command body's. */
export const ConsoleCommand = z.strictObject({
  command: z.enum(["force-unlock", "force-lock", "force-cancel-booking", "sync-device"]),
  reason: z.enum(FORCE_UNLOCK_REASONS).optional(),
  comment: z.string().max(1000).optional(),
  power_cycle: z.boolean().optional(),
});
export type ConsoleCommand = z.infer<typeof ConsoleCommand>;
export type ConsoleCommandName = ConsoleCommand["command"];
