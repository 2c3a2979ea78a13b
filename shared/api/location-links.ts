import { z } from "zod";

/**
 * The read-only resources a location links to by `uri` (spec: Location detail, "each holds uri"; their
 * internal fields are not shown, so these shapes are this service's).
 */

/** A collection this service keeps nothing in (subscriptions, descriptions, external devices). */
export const EmptyCollection = z
  .object({ data: z.array(z.never()).describe("Always empty: the service keeps none"), uri: z.string() })
  .meta({ id: "EmptyCollection" });
export type EmptyCollection = z.infer<typeof EmptyCollection>;

export const ORGANIZATION_ROLES = ["owner", "operator", "reseller", "distributor"] as const;

/** Deprecated (spec): the organisations behind a location, from its owner/operator/reseller/distributor ids. */
export const OrganizationList = z
  .object({
    data: z.array(z.object({ id: z.string(), role: z.enum(ORGANIZATION_ROLES) })),
    uri: z.string(),
  })
  .meta({ id: "OrganizationList" });
export type OrganizationList = z.infer<typeof OrganizationList>;

/** A location's audit record (restricted): when it was created and last changed. */
export const LocationAudit = z
  .object({ uri: z.string(), created_at: z.string(), updated_at: z.string() })
  .meta({ id: "LocationAudit" });
export type LocationAudit = z.infer<typeof LocationAudit>;

// A location's whitelists (`whitelists.uri`) are the whitelist service's: shared/api/whitelist.ts.
