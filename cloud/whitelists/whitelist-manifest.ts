import { z } from "zod";
import { Uuid } from "../../shared/api/uuid.ts";
import { CardId } from "../../shared/api/whitelist.ts";
import { STORED_ENTITY_STATUSES } from "../../shared/domain/whitelist-entity.ts";

/** The site manifest's whitelists: set up by the service operator (spec: Whitelist rule 4). */

export const ManifestWhitelistTarget = z.strictObject({
  location: z.string().min(1).describe("Code of one of the operator's locations"),
  device: z
    .string()
    .min(1)
    .optional()
    .describe("Alias of a device at that location (a gateway id names its GUARD); without it, the location"),
});

export const ManifestWhitelistEntity = z.strictObject({
  id: CardId,
  status: z.enum(STORED_ENTITY_STATUSES).default("ACTIVE"),
  expires_at: z.iso
    .datetime({ offset: true })
    .optional()
    .describe("RFC 3339; without it the card does not expire"),
  is_master_key: z.boolean().default(false),
  comment: z.string().max(1000).default(""),
});
export type ManifestWhitelistEntity = z.infer<typeof ManifestWhitelistEntity>;

export const ManifestWhitelist = z.strictObject({
  id: Uuid.describe("Fixed id: integrators address the whitelist by it"),
  name: z.string().min(1),
  description: z.string().default(""),
  keys_only: z
    .boolean()
    .default(true)
    .describe(
      "Of every target: the cards are kept on the gateway for offline decisions, not shown to app users",
    ),
  targets: z.array(ManifestWhitelistTarget).default([]),
  entities: z
    .array(ManifestWhitelistEntity)
    .default([])
    .describe("Cards set on every apply (upsert); cards added through the API are kept"),
});
export type ManifestWhitelist = z.infer<typeof ManifestWhitelist>;
