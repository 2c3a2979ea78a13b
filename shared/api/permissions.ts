/**
 * Permissions an API client may hold (spec: Authentication → Permissions says they exist; how they are
 * granted is not shown, so the site manifest grants them per client: docs/decisions/authentication.md).
 */
export const PERMISSIONS = [
  "SUPERADMIN",
  "ORGANIZATION_MANAGEMENT",
  "RESTRICTED_FIELDS",
  "PUBLIC_TAG_MANAGEMENT",
  "PRIVATE_TAG_MANAGEMENT",
  "DEVICE_PRIVATE_FIELDS",
  "ACT_ON_BEHALF_OF",
  "DEVICE_ADMIN",
] as const;
export type Permission = (typeof PERMISSIONS)[number];

/** The permission each PATCH location field needs; `null` means access to the location is enough. */
export const PATCH_PERMISSIONS: Record<string, Permission | null> = {
  code: null,
  city: null,
  latitude: null,
  longitude: null,
  rfid_parking: null,
  booking_available: null,
  segment: null,
  app_parking: null,
  state: null,
  address: null,
  label: null,
  free_parking_hours: null,
  e_charging: null,
  district: null,
  free_of_charge: null,
  support_phone: "SUPERADMIN",
  description: "SUPERADMIN",
  type: "SUPERADMIN",
  terms_url: "SUPERADMIN",
  icon_type: "SUPERADMIN",
  generation: "SUPERADMIN",
  auto_restarts_enabled: "SUPERADMIN",
  power_save_strategy: "SUPERADMIN",
  use_case: "SUPERADMIN",
  support_email: "SUPERADMIN",
  max_user_sessions: "SUPERADMIN",
  region: "SUPERADMIN",
  owner_id: "ORGANIZATION_MANAGEMENT",
  operator_id: "ORGANIZATION_MANAGEMENT",
  reseller_id: "ORGANIZATION_MANAGEMENT",
  distributor_id: "ORGANIZATION_MANAGEMENT",
  free_parking_details: "RESTRICTED_FIELDS",
  free_parking_summary: "RESTRICTED_FIELDS",
  comment: "RESTRICTED_FIELDS",
  public_tags: "PUBLIC_TAG_MANAGEMENT",
  private_tags: "PRIVATE_TAG_MANAGEMENT",
};
