import { AppError } from "../../shared/api/errors.ts";
import type { Permission } from "../../shared/api/permissions.ts";

/** An integrator's back end, authenticated by OAuth2 client credentials (S2S). */
export type ClientPrincipal = {
  kind: "client";
  /** The API client id (S2S OAuth2). */
  id: string;
  operatorId: string;
  permissions: ReadonlySet<Permission>;
};

/** A rider of an end-user app, authenticated by external-user sign-in. Holds no permissions. */
export type UserPrincipal = {
  kind: "user";
  /** The service's id of the user (service_user_id, a UUID): the `user_id` of sessions and access lists. */
  id: string;
  operatorId: string;
  permissions: ReadonlySet<Permission>;
  /** The rider's token generation the token was issued under (cloud/users/rider-token-revocation.ts). */
  tokenGeneration?: number;
};

/**
 * A member of the operator's staff acting through the console (signed in by cookie, not by a token), with
 * the permissions of the operator's back end that the staff role grants (cloud/console/staff-principal.ts).
 */
export type StaffPrincipal = {
  kind: "staff";
  /** The staff member's id. */
  id: string;
  operatorId: string;
  permissions: ReadonlySet<Permission>;
};

/** Who a bearer token names. */
export type TokenPrincipal = ClientPrincipal | UserPrincipal;

/** Who is calling, as established by the bearer token or the console session. Every lookup is scoped by operatorId. */
export type Principal = ClientPrincipal | UserPrincipal | StaffPrincipal;

export function can(p: Principal, permission: Permission): boolean {
  return p.permissions.has(permission);
}

/** Operator functions (management, force commands, sync-device) are closed to riders' tokens: 403. */
export function requireClient(p: Principal, what: string): ClientPrincipal {
  if (p.kind !== "client")
    throw new AppError("ERRORS.FORBIDDEN", `${what} is not available to external users`);
  return p;
}
