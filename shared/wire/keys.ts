/**
 * The keys channel of the wire (shared/wire/messages.ts re-exports it): the keys_only whitelist cache
 * (ARCHITECTURE flow 4).
 */
import * as z from "zod/mini";
import "./zod-english.ts";
import { SentAt, Timestamp, WireCardId } from "./fields.ts";

/**
 * One card's grant through one whitelist, reduced to what this gateway's decisions need: the whitelist's
 * keys_only targets at the gateway's location (the location itself and/or some of its devices).
 */
export const Grant = z.object({
  card_id: WireCardId,
  whitelist_id: z.uuid(),
  status: z.enum(["ACTIVE", "INACTIVE"]),
  expires_at: z.nullable(Timestamp),
  is_master_key: z.boolean(),
  /** Location ids targeted (the gateway's own location, when the whitelist targets it). */
  location_ids: z.array(z.uuid()).check(z.maxLength(100)),
  /** Device ids targeted, among this gateway's devices. */
  device_ids: z.array(z.uuid()).check(z.maxLength(1000)),
});
export type Grant = z.infer<typeof Grant>;

export const GrantKey = z.object({ card_id: WireCardId, whitelist_id: z.uuid() });
export type GrantKey = z.infer<typeof GrantKey>;

/** Grants per snapshot part: a part stays well under the broker's 256 KB packet limit. */
export const SNAPSHOT_PART_SIZE = 1000;

/**
 * Down, `keys`, QoS 1. A delta applies only on top of `base_version` (else the gateway reports its version
 * and gets a snapshot); a snapshot replaces the whole cache once all its parts have arrived; an answer
 * replies to a `query` for a card the gateway does not hold.
 */
export const KeysDown = z.discriminatedUnion("kind", [
  z.object({
    kind: z.literal("delta"),
    gateway_id: z.string(),
    base_version: z.int().check(z.nonnegative()),
    version: z.int().check(z.positive()),
    upserts: z.array(Grant).check(z.maxLength(SNAPSHOT_PART_SIZE)),
    removals: z.array(GrantKey).check(z.maxLength(SNAPSHOT_PART_SIZE)),
    ...SentAt,
  }),
  z.object({
    kind: z.literal("snapshot"),
    gateway_id: z.string(),
    version: z.int().check(z.nonnegative()),
    /** 1-based; parts of one snapshot share its version. */
    part: z.int().check(z.positive()),
    parts: z.int().check(z.positive()),
    grants: z.array(Grant).check(z.maxLength(SNAPSHOT_PART_SIZE)),
    ...SentAt,
  }),
  z.object({
    kind: z.literal("answer"),
    gateway_id: z.string(),
    query_id: z.uuid(),
    card_id: WireCardId,
    /** The card's grants at this gateway's location, keys_only or not; empty: unknown here. */
    grants: z.array(Grant).check(z.maxLength(100)),
    ...SentAt,
  }),
]);
export type KeysDown = z.infer<typeof KeysDown>;

/**
 * Up, `keys_report`, QoS 1, not queued (both are worthless later and are sent again): the version the gateway
 * holds (on connect, after applying, on a delta it cannot apply), and a question about a card it does not
 * hold, asked while connected only.
 */
export const KeysUp = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("version"), gateway_id: z.string(), version: z.int().check(z.nonnegative()) }),
  z.object({
    kind: z.literal("query"),
    gateway_id: z.string(),
    query_id: z.uuid(),
    card_id: WireCardId,
    device_id: z.nullable(z.uuid()),
  }),
]);
export type KeysUp = z.infer<typeof KeysUp>;
