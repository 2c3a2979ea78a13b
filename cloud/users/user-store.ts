import type { Executor } from "../store/db.ts";
import { fromJson } from "../store/json-column.ts";

export type ExternalUser = { id: string; operatorId: string; userId: string; phoneNumber: string | null };

export type OperatorCallbacks = {
  operatorId: string;
  signUpUrl: string;
  signInUrl: string;
  allowPrivateAddresses: boolean;
  /** Signing secrets, newest first; empty for addresses stored before callbacks were signed. */
  secrets: string[];
};

const toUser = (r: { id: string; operator_id: string; user_id: string; phone_number: string | null }) => ({
  id: r.id,
  operatorId: r.operator_id,
  userId: r.user_id,
  phoneNumber: r.phone_number,
});

/** The store's external users and their operators' callback addresses. Every lookup names the operator. */
export function userStore(db: Executor) {
  return {
    /** The operator's verification callbacks; undefined for an unknown operator or one without them. */
    async callbacksOf(operatorId: string): Promise<OperatorCallbacks | undefined> {
      const row = await db
        .selectFrom("external_user_callbacks")
        .selectAll()
        .where("operator_id", "=", operatorId)
        .executeTakeFirst();
      return (
        row && {
          operatorId: row.operator_id,
          signUpUrl: row.sign_up_url,
          signInUrl: row.sign_in_url,
          allowPrivateAddresses: row.allow_private_addresses === 1,
          secrets: fromJson(row.secrets),
        }
      );
    },

    async find(operatorId: string, serviceUserId: string): Promise<ExternalUser | undefined> {
      const row = await db
        .selectFrom("external_users")
        .selectAll()
        .where("operator_id", "=", operatorId)
        .where("id", "=", serviceUserId)
        .executeTakeFirst();
      return row && toUser(row);
    },

    async findByUserId(operatorId: string, userId: string): Promise<ExternalUser | undefined> {
      const row = await db
        .selectFrom("external_users")
        .selectAll()
        .where("operator_id", "=", operatorId)
        .where("user_id", "=", userId)
        .executeTakeFirst();
      return row && toUser(row);
    },

    async setPhoneNumber(user: ExternalUser, phoneNumber: string | null): Promise<void> {
      if (user.phoneNumber === phoneNumber) return;
      await db
        .updateTable("external_users")
        .set({ phone_number: phoneNumber })
        .where("id", "=", user.id)
        .where("operator_id", "=", user.operatorId)
        .execute();
    },
  };
}
