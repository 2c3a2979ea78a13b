import type { Permission } from "../../shared/api/permissions.ts";
import type { Executor } from "../store/db.ts";

/** An integrator's API client, as the token endpoint authenticates it. */
export type ApiClient = {
  clientId: string;
  operatorId: string;
  /** scrypt hash of the client secret (auth/secrets.ts) */
  secretHash: string;
  permissions: Permission[];
};

/** The API clients the site manifest declares, looked up by client_id. */
export function apiClientRepository(db: Executor) {
  return {
    async find(clientId: string): Promise<ApiClient | undefined> {
      const row = await db
        .selectFrom("api_clients")
        .selectAll()
        .where("client_id", "=", clientId)
        .executeTakeFirst();
      return (
        row && {
          clientId: row.client_id,
          operatorId: row.operator_id,
          secretHash: row.secret_hash,
          permissions: JSON.parse(row.permissions) as Permission[],
        }
      );
    },
  };
}

export type ApiClientRepository = ReturnType<typeof apiClientRepository>;
