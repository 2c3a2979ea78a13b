/**
 * The fleet the load generator plays, named the same way by the runner (which declares it) and the
 * simulator (which plays it): operators of 100 locations, each location one gateway with a GUARD and 15
 * lockers, so every operator's location list has the same size whatever the fleet's.
 */
import { derivedId } from "../../cloud/manifest/apply-manifest.ts";

export const LOCATIONS_PER_OPERATOR = 100;
export const LOCKERS_PER_GATEWAY = 15;
/** A GUARD (declared for every gateway) and the lockers. */
export const DEVICES_PER_GATEWAY = LOCKERS_PER_GATEWAY + 1;
/** Every gateway's and API client's secret (the shared benchmark broker admits anyone anyway). */
export const FLEET_SECRET = "fleet-bench-secret";

export const operatorCount = (gateways: number) => Math.ceil(gateways / LOCATIONS_PER_OPERATOR);
export const operatorOf = (gateway: number) => Math.floor(gateway / LOCATIONS_PER_OPERATOR);
export const operatorId = (k: number) => `f1ee7000-0000-4000-8000-${k.toString(16).padStart(12, "0")}`;
export const clientId = (k: number) => `fleet-${k}`;
export const gatewayId = (i: number) => `gw-${String(i).padStart(5, "0")}`;
export const locationCode = (i: number) => `F${String(i).padStart(5, "0")}`;
export const locationId = (i: number) => derivedId(operatorId(operatorOf(i)), "location", locationCode(i));
/** Lockers have aliases "1" … "15" (bench/support.ts `lockers`). */
export const lockerId = (i: number, alias: number) => derivedId(locationId(i), "device", String(alias));
/** apply-manifest.ts derives a GUARD's id from its gateway's. */
export const guardId = (i: number) => derivedId("gateway", gatewayId(i));
