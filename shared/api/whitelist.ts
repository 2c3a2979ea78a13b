import { z } from "zod";
import { ENTITY_STATUSES, STORED_ENTITY_STATUSES, TARGET_TYPES } from "../domain/whitelist-entity.ts";
import { Reference } from "./common.ts";
import { Uuid } from "./uuid.ts";

/** The whitelist service's resources and request bodies (spec: Whitelist, entity, target; Whitelist). */

export const Whitelist = z
  .object({ name: z.string(), description: z.string(), id: z.string(), uri: z.string() })
  .meta({ id: "Whitelist" });
export type Whitelist = z.infer<typeof Whitelist>;

export const WhitelistList = z
  .object({ data: z.array(Whitelist), uri: z.string() })
  .meta({ id: "WhitelistList" });
export type WhitelistList = z.infer<typeof WhitelistList>;

/** Spec: lowercase hex, no separators, even length, at most 20 characters. Refused, never normalised. */
export const CARD_ID_PATTERN = /^(?:[0-9a-f]{2}){1,10}$/;
export const CardId = z
  .string()
  .regex(
    CARD_ID_PATTERN,
    "a card id is lowercase hexadecimal without separators, of even length, at most 20 characters",
  )
  .describe("RFID card id: lowercase hex, no separators, even length, at most 20 characters");

export const WhitelistEntity = z
  .object({
    id: z.string().describe("RFID card id: lowercase hex, even length, at most 20 characters"),
    id_type: z.literal("rfid"),
    status: z
      .enum(ENTITY_STATUSES)
      .describe("EXPIRED: an ACTIVE card whose expires_at has passed (only ever in reads)"),
    expires_at: z.string().describe("RFC 3339; empty if the card does not expire"),
    is_master_key: z
      .boolean()
      .describe("unlocks any occupied device at the targeted location (until expires_at, if set)"),
    comment: z.string(),
    created_at: z.string().describe("RFC 3339: when the card was first added to this whitelist"),
  })
  .meta({ id: "WhitelistEntity" });
export type WhitelistEntity = z.infer<typeof WhitelistEntity>;

export const WhitelistEntityList = z
  .object({ data: z.array(WhitelistEntity), uri: z.string() })
  .meta({ id: "WhitelistEntityList" });
export type WhitelistEntityList = z.infer<typeof WhitelistEntityList>;

export const WhitelistTarget = z
  .object({
    id: z.string(),
    id_type: z.enum(TARGET_TYPES),
    keys_only: z
      .boolean()
      .describe("the keys are synchronised to the device's local storage and not shown to app users"),
    reference: Reference,
  })
  .meta({ id: "WhitelistTarget" });
export type WhitelistTarget = z.infer<typeof WhitelistTarget>;

export const WhitelistTargetList = z
  .object({ data: z.array(WhitelistTarget), uri: z.string() })
  .meta({ id: "WhitelistTargetList" });
export type WhitelistTargetList = z.infer<typeof WhitelistTargetList>;

export const TargetQuery = z.strictObject({
  type: z.enum(TARGET_TYPES).optional().describe("only targets of this type"),
});
export type TargetQuery = z.infer<typeof TargetQuery>;

// ---------------------------------------------------------------------------------------------------------
// Batch modification. The body's frame (operation, a list of objects) is checked as a whole; each item is
// then checked and applied on its own, so one bad item fails alone (spec: Whitelist rules 1 and 2).

export const BATCH_OPERATIONS = ["ADD", "REMOVE"] as const;
export type BatchOperation = (typeof BATCH_OPERATIONS)[number];
/** Items per request (S27): a larger batch is refused whole, before any item is applied. */
export const MAX_BATCH_ITEMS = 1000;

const StoredStatus = z.enum(STORED_ENTITY_STATUSES, {
  error: (issue) =>
    issue.input === "EXPIRED"
      ? "EXPIRED is read-only: it follows from expires_at (write ACTIVE or INACTIVE)"
      : "expected ACTIVE or INACTIVE",
});

/** An entity of an ADD: the card's whole record (an existing card is replaced). */
export const AddEntityItem = z.strictObject({
  id: CardId,
  id_type: z.literal("rfid"),
  status: StoredStatus.optional().describe("ACTIVE (default) or INACTIVE; EXPIRED is refused"),
  expires_at: z
    .union([z.iso.datetime({ offset: true }), z.literal("")])
    .nullable()
    .optional()
    .describe("RFC 3339 with any offset; empty, null or absent: does not expire"),
  is_master_key: z.boolean().optional().describe("default false"),
  comment: z.string().max(1000).optional().describe("default empty"),
});
export type AddEntityItem = z.infer<typeof AddEntityItem>;

/** An entity of a REMOVE: only id and id_type count; other fields (a read entity sent back) are ignored. */
export const RemoveEntityItem = z.looseObject({ id: CardId, id_type: z.literal("rfid") });

const targetUri = (type: (typeof TARGET_TYPES)[number], id: string) =>
  type === "device" ? `/device/v1/devices/${id}` : `/location/v1/locations/${id}`;

/** A target names its type as `type` (spec: modification body) or `id_type` (spec: read responses). */
function targetType(t: { type?: string; id_type?: string }, ctx: z.RefinementCtx) {
  if (t.type === undefined && t.id_type === undefined)
    ctx.addIssue({ code: "custom", path: ["type"], message: "missing (device or location required)" });
  else if (t.type !== undefined && t.id_type !== undefined && t.type !== t.id_type)
    ctx.addIssue({ code: "custom", path: ["id_type"], message: "differs from type" });
}

const TargetFields = {
  id: Uuid.describe("a device id or a location id of the caller's operator"),
  type: z.enum(TARGET_TYPES).optional().describe("device or location (required; id_type is accepted too)"),
  id_type: z.enum(TARGET_TYPES).optional().describe("the same as type"),
};

/** A target of an ADD: an existing target gets the new keys_only. */
export const AddTargetItem = z
  .strictObject({
    ...TargetFields,
    uri: z
      .string()
      .max(200)
      .describe("the target's resource: /device/v1/devices/{id} or /location/v1/locations/{id}"),
    keys_only: z.boolean().optional().describe("default true"),
  })
  .superRefine((t, ctx) => {
    targetType(t, ctx);
    const type = t.type ?? t.id_type;
    if (type !== undefined && t.uri.toLowerCase() !== targetUri(type, t.id))
      ctx.addIssue({ code: "custom", path: ["uri"], message: `must be ${targetUri(type, t.id)}` });
  });
export type AddTargetItem = z.infer<typeof AddTargetItem>;

/** A target of a REMOVE: id and type (or id_type); other fields are ignored. */
export const RemoveTargetItem = z.looseObject(TargetFields).superRefine(targetType);
export type RemoveTargetItem = z.infer<typeof RemoveTargetItem>;

/**
 * An item as the body's schema takes it: any object, documented as the ADD item's schema. Items are
 * checked one by one by the service, so a bad item fails alone (listed in `error_results`).
 */
function itemDocumentedAs(schema: z.ZodType, description: string) {
  const { $schema: _, ...json } = z.toJSONSchema(schema, { io: "input", unrepresentable: "any" });
  return z.looseObject({}).meta({ ...json, description });
}

export const EntityModification = z
  .strictObject({
    operation: z.enum(BATCH_OPERATIONS),
    entities: z
      .array(
        itemDocumentedAs(
          AddEntityItem,
          "An RFID card. ADD replaces a card already in the list (upsert); REMOVE needs only id and id_type.",
        ),
      )
      .min(1)
      .max(MAX_BATCH_ITEMS),
  })
  .meta({ id: "WhitelistEntityModification" });
export type EntityModification = z.infer<typeof EntityModification>;

export const TargetModification = z
  .strictObject({
    operation: z.enum(BATCH_OPERATIONS),
    targets: z
      .array(
        itemDocumentedAs(
          AddTargetItem,
          "A device or location of the caller's operator. ADD of a target already there sets its keys_only; " +
            "REMOVE needs only id and type (or id_type).",
        ),
      )
      .min(1)
      .max(MAX_BATCH_ITEMS),
  })
  .meta({ id: "WhitelistTargetModification" });
export type TargetModification = z.infer<typeof TargetModification>;

/** One failed item: where it was, its id, why (the spec's error fields); then the item as sent. */
const ITEM_FAILURE = {
  index: z.number().int().describe("the item's position in the request's list, from 0"),
  id: z.string().describe("the item's id as sent; empty if it had none"),
  error_code: z.string().describe("ERRORS.<NAME>"),
  error_message: z.string(),
};
export type BatchItemFailure = { index: number; id: string; error_code: string; error_message: string };

/** Spec: Errors, batch modification — the standard fields plus `error_results`, one per failed item. */
const batchFailure = (item: z.ZodObject) =>
  z.object({
    error_message: z.string(),
    status_code: z.number().int(),
    correlation_id: z.string(),
    error_code: z.literal("ERRORS.BATCH_ITEMS_FAILED"),
    error_results: z.array(item).describe("only the failed items; the others were applied"),
  });

export const EntityBatchFailure = batchFailure(
  z.object({ ...ITEM_FAILURE, entity: z.unknown().describe("the item as sent") }),
).meta({ id: "WhitelistEntityBatchFailure" });
export const TargetBatchFailure = batchFailure(
  z.object({ ...ITEM_FAILURE, target: z.unknown().describe("the item as sent") }),
).meta({ id: "WhitelistTargetBatchFailure" });
