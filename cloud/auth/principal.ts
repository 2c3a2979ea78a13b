import type { Permission } from "../../shared/api/permissions.ts";

/** Who is calling, as established by the bearer token. Every object lookup is scoped by operatorId. */
export type Principal = {
  kind: "client";
  /** The API client id (S2S OAuth2). */
  id: string;
  operatorId: string;
  permissions: ReadonlySet<Permission>;
};

export function can(p: Principal, permission: Permission): boolean {
  return p.permissions.has(permission);
}
