/**
 * Whitelist entities (spec: Whitelist, entity, target; Whitelist entity status) as pure functions of what
 * is stored and `now`: EXPIRED is never written, it is what an ACTIVE card is once its `expires_at` has
 * come, so it is right at any instant without a sweeper.
 */

/** What a write may set (spec: "ADD can set ACTIVE or INACTIVE"). */
export const STORED_ENTITY_STATUSES = ["ACTIVE", "INACTIVE"] as const;
export type StoredEntityStatus = (typeof STORED_ENTITY_STATUSES)[number];

/** What a read shows. */
export const ENTITY_STATUSES = ["ACTIVE", "INACTIVE", "EXPIRED"] as const;
export type EntityStatus = (typeof ENTITY_STATUSES)[number];

/** Spec (Limits): a device can have up to 3 whitelists by default. */
export const DEFAULT_MAX_WHITELISTS_PER_DEVICE = 3;

export const TARGET_TYPES = ["device", "location"] as const;
export type TargetType = (typeof TARGET_TYPES)[number];

/**
 * The status a card has at `now`. INACTIVE is an administrator's decision and shows whatever the time;
 * an ACTIVE card is EXPIRED from its `expires_at` on (the instant itself included).
 */
export function entityStatus(stored: StoredEntityStatus, expiresAt: string | null, now: Date): EntityStatus {
  if (stored === "INACTIVE") return "INACTIVE";
  if (expiresAt !== null && Date.parse(expiresAt) <= now.getTime()) return "EXPIRED";
  return "ACTIVE";
}
