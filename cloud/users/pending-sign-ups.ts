import { randomUUID } from "node:crypto";
import type { Db } from "../store/db.ts";
import { type ExternalUser, userStore } from "./user-store.ts";

/**
 * How long a sign-up the operator has not accepted keeps its service_user_id: a day of repeats (spec:
 * sign-up step 5) and of sign-ins the operator verifies, then it is forgotten (docs/decisions/external-users.md).
 */
export const PENDING_SIGN_UP_TTL_MS = 24 * 3600_000;

export type PendingSignUp = { id: string; operatorId: string; userId: string };

/** Whom a sign-up is about: a user the operator accepted before, or a pending sign-up. */
export type SignUpSubject =
  | { kind: "user"; user: ExternalUser }
  | { kind: "pending"; pending: PendingSignUp };

/** The store or a transaction of it. */
type Store = Pick<Db, "selectFrom" | "updateTable" | "insertInto" | "deleteFrom">;

const toPending = (r: { id: string; operator_id: string; user_id: string }): PendingSignUp => ({
  id: r.id,
  operatorId: r.operator_id,
  userId: r.user_id,
});

/**
 * Sign-ups waiting for the operator. A user row is made only when the operator accepts one (its sign-up
 * callback answers below 400, or it verifies a sign-in of the id), so a sign-up with an id the operator
 * does not know leaves nothing behind; a pending one only keeps the id stable for a repeat, and is no user:
 * nothing else (sessions, access lists, refresh) sees it.
 */
export function pendingSignUps(db: Store) {
  const users = userStore(db);

  async function pendingOf(operatorId: string, userId: string, now: Date) {
    const row = await db
      .selectFrom("external_user_sign_ups")
      .select(["id", "operator_id", "user_id"])
      .where("operator_id", "=", operatorId)
      .where("user_id", "=", userId)
      .where("expires_at", ">", now.toISOString())
      .executeTakeFirst();
    return row && toPending(row);
  }

  return {
    /**
     * The user with this integrator id, or its live pending sign-up, opened if there is none. Concurrent
     * sign-ups of one user meet on the unique (operator_id, user_id) keys and get the same id.
     */
    async subject(operatorId: string, userId: string, now: Date): Promise<SignUpSubject> {
      // Three rounds at most: a pending row read between another request's accept and its delete is gone.
      for (let round = 0; round < 3; round++) {
        const user = await users.findByUserId(operatorId, userId);
        if (user) return { kind: "user", user };
        const ts = now.toISOString();
        // Expired rows (of any operator) go first, so the table holds only live sign-ups.
        await db.deleteFrom("external_user_sign_ups").where("expires_at", "<=", ts).execute();
        await db
          .insertInto("external_user_sign_ups")
          .values({
            id: randomUUID(),
            operator_id: operatorId,
            user_id: userId,
            created_at: ts,
            expires_at: new Date(now.getTime() + PENDING_SIGN_UP_TTL_MS).toISOString(),
          })
          .onConflict((oc) => oc.doNothing())
          .execute();
        const pending = await pendingOf(operatorId, userId, now);
        if (pending) return { kind: "pending", pending };
      }
      throw new Error(`sign-up of ${userId} (operator ${operatorId}) found neither a user nor a pending row`);
    },

    /** A live pending sign-up by the service_user_id it gave out. */
    async find(operatorId: string, serviceUserId: string, now: Date): Promise<PendingSignUp | undefined> {
      const row = await db
        .selectFrom("external_user_sign_ups")
        .select(["id", "operator_id", "user_id"])
        .where("operator_id", "=", operatorId)
        .where("id", "=", serviceUserId)
        .where("expires_at", ">", now.toISOString())
        .executeTakeFirst();
      return row && toPending(row);
    },

    /** The operator rejected it: forgotten at once. */
    async drop(p: PendingSignUp): Promise<void> {
      await db
        .deleteFrom("external_user_sign_ups")
        .where("id", "=", p.id)
        .where("operator_id", "=", p.operatorId)
        .execute();
    },

    /**
     * The operator accepted it: the user is made with the pending id. Returns the operator's user with this
     * integrator id, which has another id only if one was made meanwhile another way (a manifest rider).
     */
    async accept(p: PendingSignUp, now: Date): Promise<ExternalUser> {
      await db
        .insertInto("external_users")
        .values({
          id: p.id,
          operator_id: p.operatorId,
          user_id: p.userId,
          phone_number: null,
          created_at: now.toISOString(),
        })
        .onConflict((oc) => oc.doNothing())
        .execute();
      await this.drop(p);
      const user = await users.findByUserId(p.operatorId, p.userId);
      if (!user) throw new Error(`external user ${p.userId} of ${p.operatorId} vanished after insert`);
      return user;
    },
  };
}

export type PendingSignUps = ReturnType<typeof pendingSignUps>;
