import { z } from "zod";
import { fromJson, type Json } from "../json-column.ts";

/**
 * Device fields kept in the `attrs` JSON column. `has_allowlist` is not one: it follows the whitelists'
 * targets (cloud/whitelists/allowlists.ts).
 */
export const DeviceAttrs = z.object({
  tags: z.array(z.string()).default([]),
  comment: z.string().default(""),
  has_otp_support: z.boolean().default(false),
  has_access_lists: z.boolean().default(false),
  has_subscription: z.boolean().default(false),
  price_list_id: z.string().nullable().default(null),
  deep_link: z.string().default(""),
  /** Where the gateway reaches the device: lock-bus board and channel, or a GPIO line set. */
  bus: z.object({ board: z.number().int(), channel: z.number().int() }).nullable().default(null),
});
export type DeviceAttrs = z.infer<typeof DeviceAttrs>;

/** Device fields the API shows that are derived, not set: a manifest that sets one is refused with this reason. */
export const DERIVED_DEVICE_FIELDS: Readonly<Record<string, string>> = {
  has_allowlist:
    "derived from the whitelists that target the device or its location; declare a whitelist target",
};

/** Through the schema, not trusted as stored: a row written before a field existed gets its default. */
export function parseDeviceAttrs(json: Json<DeviceAttrs>): DeviceAttrs {
  return DeviceAttrs.parse(fromJson(json));
}
