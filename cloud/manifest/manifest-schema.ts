import { z } from "zod";
import { LocationStatus, LocationType } from "../../shared/api/location.ts";
import { PERMISSIONS } from "../../shared/api/permissions.ts";
import { Uuid } from "../../shared/api/uuid.ts";
import { DEVICE_TYPES, POWER_SAVE_STRATEGIES } from "../../shared/domain/device-types.ts";
import { ACCESS_LIST_KINDS } from "../../shared/domain/membership.ts";
import { GATEWAY_ID_PATTERN } from "../../shared/wire/topics.ts";
import { LocationAttrsPatch } from "../locations/location-attrs.ts";
import { ManifestPriceList } from "../sessions/price-lists.ts";
import { ManifestStaff, StaffFields } from "../staff/staff-manifest.ts";
import { ExternalUsers, ExternalUsersFields, Rider } from "../users/rider-manifest.ts";
import { ManifestWebhook, WebhookFields } from "../webhooks/webhook-manifest.ts";
import {
  ManifestWhitelist,
  ManifestWhitelistEntity,
  ManifestWhitelistTarget,
} from "../whitelists/whitelist-manifest.ts";

/**
 * The service operator's site manifest: a declarative description of operators, API clients, public
 * areas, locations, gateways and devices, applied idempotently (`npm run manifest -- apply FILE`).
 * A secret is given as `secret` (plain, for local demos), `secret_env` (read from the environment) or
 * `secret_hash` (an scrypt hash); only hashes are stored.
 */
const Secret = z
  .object({
    secret: z.string().min(8).optional(),
    secret_env: z
      .string()
      .regex(/^[A-Z_][A-Z0-9_]*$/)
      .optional(),
    secret_hash: z.string().startsWith("scrypt$").optional(),
  })
  .refine((s) => [s.secret, s.secret_env, s.secret_hash].filter((x) => x !== undefined).length === 1, {
    message: "give exactly one of secret, secret_env or secret_hash",
  });

const ClientFields = z.strictObject({
  client_id: z.string().regex(/^[\x21-\x7e]{3,100}$/, "printable ASCII without spaces, 3–100 characters"),
  name: z.string().default(""),
  permissions: z.array(z.enum(PERMISSIONS)).default([]),
  secret: z.string().optional(),
  secret_env: z.string().optional(),
  secret_hash: z.string().optional(),
});
const Client = z.intersection(ClientFields, Secret);

const Bus = z.strictObject({
  board: z.number().int().min(1).max(247),
  channel: z.number().int().min(1).max(64),
});

const Device = z.strictObject({
  id: Uuid.optional().describe("Stable id; derived from the location and alias when omitted"),
  alias: z.string().min(1).max(32),
  type: z.enum(DEVICE_TYPES).exclude(["GUARD"]),
  code: z.string().default(""),
  hardware_id: z.string().default(""),
  power_save_strategy: z.enum(POWER_SAVE_STRATEGIES).default("NONE"),
  bus: Bus.optional(),
  tags: z.array(z.string()).default([]),
  comment: z.string().default(""),
  price_list: z
    .string()
    .optional()
    .describe("Code of one of the operator's price_lists; overrides the location's"),
});

const GatewayFields = z.strictObject({
  id: z.string().regex(GATEWAY_ID_PATTERN, "letters, digits, '.', '_' and '-' only"),
  guard_id: Uuid.optional().describe("Id of the gateway's GUARD device; derived when omitted"),
  camera: z.boolean().default(false),
  devices: z.array(Device).default([]),
  secret: z.string().optional(),
  secret_env: z.string().optional(),
  secret_hash: z.string().optional(),
});
const Gateway = z.intersection(GatewayFields, Secret);

/** Only members of a location's access lists may lock or book there; integrators manage the members. */
const AccessList = z.strictObject({
  id: Uuid.describe("Fixed id: integrators address the list by it"),
  kind: z.enum(ACCESS_LIST_KINDS).describe("paid lists have payment periods; closed and password lists not"),
  name: z.string().min(1),
});

const Location = z.strictObject({
  id: Uuid.optional().describe("Stable id; derived from the operator and code when omitted"),
  code: z.string().min(1).max(32),
  label: z.string().min(1),
  type: LocationType,
  status: LocationStatus.default("LAUNCHED"),
  latitude: z.number().min(-90).max(90),
  longitude: z.number().min(-180).max(180),
  tags: z.array(z.string()).default([]),
  attrs: LocationAttrsPatch.default({}),
  gateways: z.array(Gateway).default([]),
  price_list: z
    .string()
    .optional()
    .describe("Code of one of the operator's price_lists: what its devices' sessions cost"),
  access_lists: z
    .array(AccessList)
    .default([])
    .describe("A list left out when re-applied is kept with its members but no longer enforced"),
});

const PublicArea = z.strictObject({
  id: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9_-]{0,99}$/, "a slug or a UUID")
    .describe("Public area id; may be a slug such as 'amsterdam-centre'"),
  name: z.string(),
  locations: z.array(z.string()).describe("Codes of this operator's locations"),
});

const Operator = z.strictObject({
  id: Uuid,
  name: z.string().min(1),
  clients: z.array(Client).default([]),
  public_areas: z.array(PublicArea).default([]),
  locations: z.array(Location).default([]),
  price_lists: z.array(ManifestPriceList).default([]).describe("Named by code from locations and devices"),
  external_users: ExternalUsers.optional().describe(
    "Where sign-up and sign-in verification callbacks go, and the secret signing them (exactly one of secret " +
      "or secret_env; previous_secret(_env) during a rotation); without it the operator has no external users",
  ),
  riders: z.array(Rider).default([]).describe("External users created without a sign-up (demo, tests)"),
  webhooks: z
    .array(ManifestWebhook)
    .default([])
    .describe("Where the operator's site events are sent; an endpoint left out is disabled, not deleted"),
  whitelists: z
    .array(ManifestWhitelist)
    .default([])
    .describe("RFID whitelists and their targets; integrators manage the cards through the API"),
  staff: z
    .array(ManifestStaff)
    .default([])
    .describe("Console staff of this operator; one left out is kept (disable it with npm run operator)"),
});

export const SiteManifest = z
  .strictObject({
    version: z.literal(1),
    operators: z.array(Operator).min(1),
    superadmins: z.array(ManifestStaff).default([]).describe("Console staff who see every operator"),
  })
  .meta({
    title: "Site manifest",
    description: "Operators, API clients, public areas, locations, gateways and devices",
  });

export type SiteManifest = z.infer<typeof SiteManifest>;

/**
 * The keys each kind of manifest object accepts, for naming an unknown key and suggesting the one meant
 * (zod's intersections of a strict and a plain object do not report unknown keys of clients and gateways).
 */
export const MANIFEST_KEYS = {
  root: Object.keys(SiteManifest.shape),
  operator: Object.keys(Operator.shape),
  client: Object.keys(ClientFields.shape),
  public_area: Object.keys(PublicArea.shape),
  location: Object.keys(Location.shape),
  attrs: Object.keys(LocationAttrsPatch.shape),
  gateway: Object.keys(GatewayFields.shape),
  device: Object.keys(Device.shape),
  bus: Object.keys(Bus.shape),
  price_list: Object.keys(ManifestPriceList.shape),
  external_users: Object.keys(ExternalUsersFields.shape),
  rider: Object.keys(Rider.shape),
  access_list: Object.keys(AccessList.shape),
  webhook: Object.keys(WebhookFields.shape),
  whitelist: Object.keys(ManifestWhitelist.shape),
  whitelist_target: Object.keys(ManifestWhitelistTarget.shape),
  whitelist_entity: Object.keys(ManifestWhitelistEntity.shape),
  staff: Object.keys(StaffFields.shape),
} as const;
export type ManifestObjectKind = keyof typeof MANIFEST_KEYS;
export type ManifestInput = z.input<typeof SiteManifest>;

/** The JSON Schema published in docs/site-manifest.schema.json, generated from the zod schema. */
export function manifestJsonSchema() {
  return z.toJSONSchema(SiteManifest, { io: "input" });
}
