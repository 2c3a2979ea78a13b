import { z } from "zod";

/**
 * Location fields kept in the `attrs` JSON column: everything the API shows that nothing filters or
 * joins on. Defaults are what a location shows before anyone sets the field. `allowlisted` and
 * `allowlist_ids` are not here: they follow the whitelists' targets (cloud/whitelists/allowlists.ts).
 */
export const LocationAttrs = z.object({
  address: z.string().default(""),
  support_phone: z.string().default(""),
  support_email: z.string().default(""),
  terms_url: z.string().default(""),
  terms_updated_at: z.string().default(""),
  has_access_lists: z.boolean().default(false),
  icon_type: z.string().default(""),
  owner_id: z.string().default(""),
  operator_id: z.string().default(""),
  reseller_id: z.string().default(""),
  distributor_id: z.string().default(""),
  description: z.string().default(""),
  comment: z.string().default(""),
  private_tags: z.array(z.string()).default([]),
  has_maintenance_issues: z.boolean().default(false),
  access_list_ids: z.array(z.string()).default([]),
  rfid_parking: z.boolean().default(false),
  app_parking: z.boolean().default(true),
  booking_available: z.boolean().default(true),
  e_charging: z.boolean().default(false),
  free_of_charge: z.boolean().default(false),
  free_parking_details: z.string().default(""),
  free_parking_summary: z.string().default(""),
  free_parking_hours: z.number().default(0),
  segment: z.string().default(""),
  district: z.string().default(""),
  region: z.string().default(""),
  city: z.string().default(""),
  use_case: z.string().default(""),
  generation: z.string().default(""),
  state: z.string().default(""),
  max_user_sessions: z.number().int().default(1),
  auto_restarts_enabled: z.boolean().default(false),
  power_save_strategy: z.string().default("NONE"),
  analytics_dashboard_id: z.string().default(""),
});
export type LocationAttrs = z.infer<typeof LocationAttrs>;

/**
 * Fields the API shows that are derived, not set: a manifest that sets one is refused with this reason
 * (cloud/manifest/manifest-key-problems.ts) rather than have it silently ignored.
 */
export const DERIVED_LOCATION_FIELDS: Readonly<Record<string, string>> = {
  allowlisted:
    "derived from the whitelists that target the location or its devices; declare a whitelist target",
  allowlist_ids:
    "derived from the whitelists that target the location or its devices; declare a whitelist target",
};

export function parseLocationAttrs(json: string): LocationAttrs {
  return LocationAttrs.parse(JSON.parse(json));
}

/**
 * The same fields with no defaults, every one optional: what a site manifest may set. Fields it leaves
 * out keep their stored value when the manifest is applied again.
 */
export const LocationAttrsPatch = z
  .object(
    Object.fromEntries(
      Object.entries(LocationAttrs.shape).map(([key, field]) => [key, field.unwrap().optional()]),
    ) as {
      [K in keyof typeof LocationAttrs.shape]: z.ZodOptional<
        ReturnType<(typeof LocationAttrs.shape)[K]["unwrap"]>
      >;
    },
  )
  .strict();
