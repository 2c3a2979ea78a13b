import { z } from "zod";
import { UriOnly } from "./common.ts";

export const LOCATION_TYPES = [
  "BIKE_DOCKS",
  "BIKE_LOCKERS",
  "BIKE_HOUSE",
  "BIKE_HOUSE_DOCKLESS",
  "BIKE_HANGAR",
  "SCOOTER_DOCKS",
  "SCOOTER_DOCKS_V2",
  "BIKE_RENTALS",
  "BIKE_RENTALS_SESSIONLESS",
  "SCOOTER_RENTALS",
] as const;
export const LocationType = z.enum(LOCATION_TYPES);
export type LocationType = z.infer<typeof LocationType>;

export const LOCATION_STATUSES = [
  "IN_HOUSE",
  "DEMO",
  "IN_DELIVERY",
  "INSTALLED",
  "LAUNCHED_OFFLINE",
  "LAUNCHED",
  "MAINTENANCE",
  "OBSOLETE",
] as const;
export const LocationStatus = z.enum(LOCATION_STATUSES);
export type LocationStatus = z.infer<typeof LocationStatus>;

export const CONNECTIONS = ["online", "partially_online", "offline", "unknown"] as const;
export const Connection = z.enum(CONNECTIONS);

export const Icon = z.object({
  png2x: z.string().describe("Deprecated: use type"),
  svg: z.string().describe("Deprecated: use type"),
  png: z.string().describe("Deprecated: use type"),
  type: z.string().describe("Icon family id"),
});

const Flag = z.object({ last_updated: z.string(), value: z.boolean() });
export const DeviceResource = z.object({ alias: z.string(), available: Flag, online: Flag });

export const LocationDevices = z.object({
  total: z.number().int().describe("Number of locking devices"),
  available: z.number().int().describe("Locking devices both available and online"),
  online: z.number().int().describe("Locking devices online"),
  resources: z.array(DeviceResource).optional().describe("Present only with include=resources"),
  uri: z.string(),
  icon: z.string().describe("Deprecated"),
});

/** Fields returned only to callers with the RESTRICTED_FIELDS permission (spec: Location). */
export const RESTRICTED_LIST_FIELDS = [
  "owner_id",
  "operator_id",
  "reseller_id",
  "distributor_id",
  "description",
  "comment",
  "private_tags",
  "has_maintenance_issues",
  "audit",
] as const;
export const RESTRICTED_DETAIL_FIELDS = [
  "generation",
  "auto_restarts_enabled",
  "power_save_strategy",
  "analytics_dashboard_id",
] as const;

export const Location = z
  .object({
    id: z.uuid(),
    uri: z.string(),
    code: z.string(),
    label: z.string(),
    name: z.string().describe("#<code> <label>"),
    type: LocationType,
    status: LocationStatus,
    connection: Connection,
    offline_since: z.string().describe("RFC 3339 timestamp or empty string"),
    address: z.string(),
    latitude: z.number(),
    longitude: z.number(),
    support_phone: z.string(),
    support_email: z.string(),
    terms_url: z.string(),
    tags: z.array(z.string()),
    allowlisted: z.boolean(),
    has_access_lists: z.boolean(),
    icon: Icon,
    devices: LocationDevices,
    rental_devices: z
      .object({ available: z.number(), icon: z.string(), uri: z.string() })
      .describe("Deprecated"),
    owner_id: z.string().optional(),
    operator_id: z.string().optional(),
    reseller_id: z.string().optional(),
    distributor_id: z.string().optional(),
    description: z.string().optional(),
    comment: z.string().optional(),
    private_tags: z.array(z.string()).optional(),
    has_maintenance_issues: z.boolean().optional(),
    audit: z.object({ uri: z.string() }).optional(),
  })
  .meta({ id: "Location" });
export type Location = z.infer<typeof Location>;

export const LocationDetail = Location.extend({
  subscriptions: UriOnly,
  descriptions: UriOnly,
  whitelists: UriOnly,
  external_devices: UriOnly,
  organizations: UriOnly.describe("Deprecated: use owner_id, operator_id, reseller_id and distributor_id"),
  access_list_ids: z.array(z.string()),
  allowlist_ids: z.array(z.string()),
  rfid_parking: z.boolean(),
  app_parking: z.boolean(),
  booking_available: z.boolean(),
  e_charging: z.boolean(),
  free_of_charge: z.boolean(),
  free_parking_details: z.string(),
  free_parking_summary: z.string(),
  free_parking_hours: z.number(),
  segment: z.string(),
  district: z.string(),
  region: z.string(),
  city: z.string(),
  use_case: z.string(),
  generation: z.string().optional(),
  state: z.string(),
  terms_updated_at: z.string(),
  max_user_sessions: z.number(),
  auto_restarts_enabled: z.boolean().optional(),
  power_save_strategy: z.string().optional(),
  analytics_dashboard_id: z.string().optional(),
}).meta({ id: "LocationDetail" });
export type LocationDetail = z.infer<typeof LocationDetail>;

export const LocationList = z
  .object({ data: z.array(Location), uri: z.string() })
  .meta({ id: "LocationList" });

/** Tag limits (docs/decisions/locations.md). */
export const TAG_MAX_LENGTH = 64;
/** Items in one `add` or `remove` list, and public or private tags a location may carry. */
export const TAGS_MAX_COUNT = 50;

const Tag = z.string().min(1).max(TAG_MAX_LENGTH);
const TagChange = z.strictObject({
  add: z.array(Tag).max(TAGS_MAX_COUNT).default([]),
  remove: z.array(Tag).max(TAGS_MAX_COUNT).default([]),
});

const NonBlank = z.string().regex(/\S/, "must not be empty");
const URL_RULE = "must be an https:// URL with a host name, or empty";
/** Shown to end users as a link: https only, to a named host, so no `javascript:` or plain-http URL. */
const HttpsUrl = z.url({ protocol: /^https$/, hostname: z.regexes.domain, error: URL_RULE });
const EMAIL_RULE = "must be an e-mail address, or empty";
/** An empty string clears the field. */
const orEmpty = <T extends z.ZodType<string>>(schema: T, error: string) =>
  z.union([z.literal(""), schema], { error });

/**
 * PATCH body (spec: Endpoints → Location). Strict: an unknown or read-only field is a 400 naming it.
 * Each field's permission is in PATCH_PERMISSIONS.
 */
export const LocationPatch = z
  .strictObject({
    code: NonBlank,
    city: z.string(),
    latitude: z.number().min(-90).max(90),
    longitude: z.number().min(-180).max(180),
    rfid_parking: z.boolean(),
    booking_available: z.boolean(),
    segment: z.string(),
    app_parking: z.boolean(),
    state: z.string(),
    address: z.string(),
    label: NonBlank,
    free_parking_hours: z.number().min(0),
    e_charging: z.boolean(),
    district: z.string(),
    free_of_charge: z.boolean(),
    support_phone: z.string(),
    description: z.string(),
    type: LocationType,
    terms_url: orEmpty(HttpsUrl, URL_RULE),
    icon_type: z.string(),
    generation: z.string(),
    auto_restarts_enabled: z.boolean(),
    power_save_strategy: z.string(),
    use_case: z.string(),
    support_email: orEmpty(z.email({ error: EMAIL_RULE }), EMAIL_RULE),
    max_user_sessions: z.number().int().min(0),
    region: z.string(),
    owner_id: z.string(),
    operator_id: z.string(),
    reseller_id: z.string(),
    distributor_id: z.string(),
    free_parking_details: z.string(),
    free_parking_summary: z.string(),
    comment: z.string(),
    public_tags: TagChange,
    private_tags: TagChange,
  })
  .partial()
  .meta({ id: "LocationPatch" });
export type LocationPatch = z.infer<typeof LocationPatch>;

/** GeoJSON of a public area (spec: Public-area location collection). Coordinates are [longitude, latitude]. */
export const PublicAreaFeatureCollection = z
  .object({
    type: z.literal("FeatureCollection"),
    features: z.array(
      z.object({
        type: z.literal("Feature"),
        geometry: z.object({ type: z.literal("Point"), coordinates: z.tuple([z.number(), z.number()]) }),
        properties: z.object({
          code: z.string(),
          address: z.string(),
          name: z.string(),
          label: z.string(),
          tags: z.array(z.string()),
          parking: z.object({ total: z.number(), available: z.number(), online: z.number() }),
          icon: z.object({ png2x: z.string(), svg: z.string(), png: z.string() }).describe("Deprecated"),
          renting: z
            .object({
              available_docks: z.number(),
              online_docks: z.number(),
              total_docks: z.number(),
              available_rentals: z.number(),
            })
            .describe("Deprecated"),
        }),
      }),
    ),
  })
  .meta({ id: "PublicAreaLocations" });

export const PublicArea = z
  .object({ id: z.string(), name: z.string(), uri: z.string() })
  .meta({ id: "PublicArea" });
export const PublicAreaList = z.object({ data: z.array(PublicArea), uri: z.string() });
