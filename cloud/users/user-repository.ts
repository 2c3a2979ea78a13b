import type { Executor } from "../store/db.ts";
import { fromJson, toJson } from "../store/json-column.ts";
import { type QueryRunner, shapedQueries } from "../store/shaped-query.ts";
import type { ExternalUserCallbacksTable, ExternalUsersTable } from "../store/tables/user-tables.ts";

export type ExternalUser = { id: string; operatorId: string; userId: string; phoneNumber: string | null };

export type OperatorCallbacks = {
  operatorId: string;
  signUpUrl: string;
  signInUrl: string;
  allowPrivateAddresses: boolean;
  /** Signing secrets, newest first; empty for addresses stored before callbacks were signed. */
  secrets: string[];
};

const toUser = (r: ExternalUsersTable): ExternalUser => ({
  id: r.id,
  operatorId: r.operator_id,
  userId: r.user_id,
  phoneNumber: r.phone_number,
});

const toCallbacks = (r: ExternalUserCallbacksTable): OperatorCallbacks => ({
  operatorId: r.operator_id,
  signUpUrl: r.sign_up_url,
  signInUrl: r.sign_in_url,
  allowPrivateAddresses: r.allow_private_addresses === 1,
  secrets: fromJson(r.secrets),
});

const callbackColumns = (c: OperatorCallbacks) => ({
  sign_up_url: c.signUpUrl,
  sign_in_url: c.signInUrl,
  allow_private_addresses: c.allowPrivateAddresses ? 1 : 0,
  secrets: toJson(c.secrets),
});

const userColumns = (u: ExternalUser, createdAt: string): ExternalUsersTable => ({
  id: u.id,
  operator_id: u.operatorId,
  user_id: u.userId,
  phone_number: u.phoneNumber,
  created_at: createdAt,
  token_generation: 0,
});

/**
 * The store's external users and their operators' callback addresses. Every lookup names the operator.
 * Given `store` (the store `db` is, kept for the service's life), the two lookups of every sign-in are
 * compiled once per shape (cloud/store/shaped-query.ts); otherwise Kysely builds them at each call.
 */
export function userRepository(db: Executor, store?: QueryRunner) {
  const shaped = store ? shapedQueries(store) : null;
  const callbacksQuery = (v: { operatorId: string }) =>
    db.selectFrom("external_user_callbacks").selectAll().where("operator_id", "=", v.operatorId);
  const userQuery = (v: { operatorId: string; id: string }) =>
    db
      .selectFrom("external_users")
      .selectAll()
      .where("operator_id", "=", v.operatorId)
      .where("id", "=", v.id);
  return {
    /** The operator's verification callbacks; undefined for an unknown operator or one without them. */
    async callbacksOf(operatorId: string): Promise<OperatorCallbacks | undefined> {
      const v = { operatorId };
      const row = shaped
        ? (await shaped.run("operator callbacks", v, callbacksQuery))[0]
        : await callbacksQuery(v).executeTakeFirst();
      return row && toCallbacks(row);
    },

    async insertCallbacks(c: OperatorCallbacks, at: string): Promise<void> {
      await db
        .insertInto("external_user_callbacks")
        .values({ operator_id: c.operatorId, ...callbackColumns(c), updated_at: at })
        .execute();
    },

    async updateCallbacks(c: OperatorCallbacks, at: string): Promise<void> {
      await db
        .updateTable("external_user_callbacks")
        .set({ ...callbackColumns(c), updated_at: at })
        .where("operator_id", "=", c.operatorId)
        .execute();
    },

    async find(operatorId: string, serviceUserId: string): Promise<ExternalUser | undefined> {
      const v = { operatorId, id: serviceUserId };
      const row = shaped
        ? (await shaped.run("external user", v, userQuery))[0]
        : await userQuery(v).executeTakeFirst();
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

    /** Whether any operator's user has this service_user_id: ids are unique across operators. */
    async idTaken(serviceUserId: string): Promise<boolean> {
      const row = await db
        .selectFrom("external_users")
        .select("id")
        .where("id", "=", serviceUserId)
        .executeTakeFirst();
      return row !== undefined;
    },

    /** Fails when the id, or the operator's user_id, is taken. */
    async insert(user: ExternalUser, createdAt: string): Promise<void> {
      await db.insertInto("external_users").values(userColumns(user, createdAt)).execute();
    },

    /** Writes nothing when the id, or the operator's user_id, is taken: the caller reads back who won. */
    async insertUnlessTaken(user: ExternalUser, createdAt: string): Promise<void> {
      await db
        .insertInto("external_users")
        .values(userColumns(user, createdAt))
        .onConflict((oc) => oc.doNothing())
        .execute();
    },

    async setPhoneNumber(user: ExternalUser, phoneNumber: string | null): Promise<void> {
      await db
        .updateTable("external_users")
        .set({ phone_number: phoneNumber })
        .where("id", "=", user.id)
        .where("operator_id", "=", user.operatorId)
        .execute();
    },
  };
}

export type UserRepository = ReturnType<typeof userRepository>;
