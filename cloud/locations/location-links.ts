import type { Device } from "../../shared/api/device.ts";
import { AppError } from "../../shared/api/errors.ts";
import type { LocationAudit, OrganizationList } from "../../shared/api/location-links.ts";
import { ORGANIZATION_ROLES } from "../../shared/api/location-links.ts";
import { locationUri } from "../../shared/api/uris.ts";
import { familyOf } from "../../shared/domain/device-types.ts";
import type { Clock } from "../../shared/time/clock.ts";
import { can, type Principal } from "../auth/principal.ts";
import { deviceRepository } from "../devices/device-repository.ts";
import { presentDevice } from "../devices/present-device.ts";
import type { Db } from "../store/db.ts";
import { devicesWithAllowlist } from "../whitelists/allowlists.ts";
import { parseLocationAttrs } from "./location-attrs.ts";
import { findOwnedLocation } from "./location-service.ts";

/**
 * The read-only resources a location's `uri` fields point at (spec: Location), so every link the API emits
 * resolves: its rental devices, organisations and audit record, and the collections this service keeps
 * nothing in (subscriptions, descriptions, external devices). Each answers 404 for a location the caller
 * cannot see, like the location itself.
 */
export function createLocationLinks(deps: { db: Db; clock: Clock }) {
  const { db, clock } = deps;
  const devices = deviceRepository(db);

  const owned = (principal: Principal, id: string) => findOwnedLocation(db, principal, id);

  return {
    /** Checks the location is the caller's; the collection itself is empty. */
    async exists(principal: Principal, id: string): Promise<void> {
      await owned(principal, id);
    },

    /** Deprecated `rental_devices`: the location's rental devices (BIKE_RENT, SCOOTER_RENT). */
    async rentalDevices(principal: Principal, id: string): Promise<Device[]> {
      await owned(principal, id);
      const now = clock.now();
      const rentals = (await devices.listAtLocation(principal.operatorId, id)).filter(
        (device) => familyOf(device.type) === "rental",
      );
      const allowlisted = await devicesWithAllowlist(db, rentals);
      return rentals.map((device) => presentDevice(device, now, principal, allowlisted.has(device.id)));
    },

    /**
     * Deprecated `organizations`: the owner, operator, reseller and distributor ids that are set. Those ids
     * are restricted fields, so a caller without RESTRICTED_FIELDS sees an empty list.
     */
    async organizations(principal: Principal, id: string): Promise<OrganizationList["data"]> {
      const a = parseLocationAttrs((await owned(principal, id)).attrs);
      if (!can(principal, "RESTRICTED_FIELDS")) return [];
      return ORGANIZATION_ROLES.flatMap((role) => {
        const orgId = a[`${role}_id`];
        return orgId ? [{ id: orgId, role }] : [];
      });
    },

    /** The restricted `audit` object: when the location was created and last changed. */
    async audit(principal: Principal, id: string): Promise<LocationAudit> {
      const row = await owned(principal, id);
      if (!can(principal, "RESTRICTED_FIELDS"))
        throw new AppError("ERRORS.FORBIDDEN", "The audit record needs the RESTRICTED_FIELDS permission");
      return { uri: `${locationUri(row.id)}/audit`, created_at: row.created_at, updated_at: row.updated_at };
    },
  };
}

export type LocationLinks = ReturnType<typeof createLocationLinks>;
