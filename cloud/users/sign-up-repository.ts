import type { Db, Executor } from "../store/db.ts";

export type PendingSignUp = { id: string; operatorId: string; userId: string };

/** The store or a transaction of it, with deletes: forgotten sign-ups go. */
type Store = Executor & Pick<Db, "deleteFrom">;

const toPending = (r: { id: string; operator_id: string; user_id: string }): PendingSignUp => ({
  id: r.id,
  operatorId: r.operator_id,
  userId: r.user_id,
});

/** Sign-ups the operator has not accepted yet; only live ones (expiry ahead of `now`) are ever found. */
export function signUpRepository(db: Store) {
  const live = (operatorId: string, now: Date) =>
    db
      .selectFrom("external_user_sign_ups")
      .select(["id", "operator_id", "user_id"])
      .where("operator_id", "=", operatorId)
      .where("expires_at", ">", now.toISOString());

  return {
    /** The live pending sign-up by the service_user_id it gave out. */
    async find(operatorId: string, serviceUserId: string, now: Date): Promise<PendingSignUp | undefined> {
      const row = await live(operatorId, now).where("id", "=", serviceUserId).executeTakeFirst();
      return row && toPending(row);
    },

    /** The live pending sign-up of the operator's integrator id. */
    async findByUserId(operatorId: string, userId: string, now: Date): Promise<PendingSignUp | undefined> {
      const row = await live(operatorId, now).where("user_id", "=", userId).executeTakeFirst();
      return row && toPending(row);
    },

    /** Every operator's sign-ups expired at `now`. */
    async dropExpired(now: Date): Promise<void> {
      await db.deleteFrom("external_user_sign_ups").where("expires_at", "<=", now.toISOString()).execute();
    },

    /**
     * Opens a pending sign-up, or writes nothing when the operator's user_id (or the id) already has one:
     * concurrent sign-ups meet on the unique keys, and the caller reads back the one that stands.
     */
    async openUnlessTaken(p: PendingSignUp, createdAt: Date, expiresAt: Date): Promise<void> {
      await db
        .insertInto("external_user_sign_ups")
        .values({
          id: p.id,
          operator_id: p.operatorId,
          user_id: p.userId,
          created_at: createdAt.toISOString(),
          expires_at: expiresAt.toISOString(),
        })
        .onConflict((oc) => oc.doNothing())
        .execute();
    },

    async drop(p: PendingSignUp): Promise<void> {
      await db
        .deleteFrom("external_user_sign_ups")
        .where("id", "=", p.id)
        .where("operator_id", "=", p.operatorId)
        .execute();
    },
  };
}

export type SignUpRepository = ReturnType<typeof signUpRepository>;
