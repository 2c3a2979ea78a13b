import { randomUUID } from "node:crypto";
import type { Db } from "../store/db.ts";
import { type PendingSignUp, signUpRepository } from "./sign-up-repository.ts";
import { type ExternalUser, userRepository } from "./user-repository.ts";

/**
 * How long a sign-up the operator has not accepted keeps its service_user_id: a day of repeats (spec:
 * sign-up step 5) and of sign-ins the operator verifies, then it is forgotten (docs/decisions/external-users.md).
 */
export const PENDING_SIGN_UP_TTL_MS = 24 * 3600_000;

/** Whom a sign-up is about: a user the operator accepted before, or a pending sign-up. */
export type SignUpSubject =
  | { kind: "user"; user: ExternalUser }
  | { kind: "pending"; pending: PendingSignUp };

/** The store or a transaction of it. */
type Store = Pick<Db, "selectFrom" | "updateTable" | "insertInto" | "deleteFrom">;

/**
 * Sign-ups waiting for the operator. A user row is made only when the operator accepts one (its sign-up
 * callback answers below 400, or it verifies a sign-in of the id), so a sign-up with an id the operator
 * does not know leaves nothing behind; a pending one only keeps the id stable for a repeat, and is no user:
 * nothing else (sessions, access lists, refresh) sees it.
 */
export function pendingSignUps(db: Store) {
  const users = userRepository(db);
  const signUps = signUpRepository(db);

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
        // Expired rows (of any operator) go first, so the table holds only live sign-ups.
        await signUps.dropExpired(now);
        await signUps.openUnlessTaken(
          { id: randomUUID(), operatorId, userId },
          now,
          new Date(now.getTime() + PENDING_SIGN_UP_TTL_MS),
        );
        const pending = await signUps.findByUserId(operatorId, userId, now);
        if (pending) return { kind: "pending", pending };
      }
      throw new Error(`sign-up of ${userId} (operator ${operatorId}) found neither a user nor a pending row`);
    },

    /** A live pending sign-up by the service_user_id it gave out. */
    find(operatorId: string, serviceUserId: string, now: Date): Promise<PendingSignUp | undefined> {
      return signUps.find(operatorId, serviceUserId, now);
    },

    /** The operator rejected it: forgotten at once. */
    drop(p: PendingSignUp): Promise<void> {
      return signUps.drop(p);
    },

    /**
     * The operator accepted it: the user is made with the pending id. Returns the operator's user with this
     * integrator id, which has another id only if one was made meanwhile another way (a manifest rider).
     */
    async accept(p: PendingSignUp, now: Date): Promise<ExternalUser> {
      await users.insertUnlessTaken(
        { id: p.id, operatorId: p.operatorId, userId: p.userId, phoneNumber: null },
        now.toISOString(),
      );
      await signUps.drop(p);
      const user = await users.findByUserId(p.operatorId, p.userId);
      if (!user) throw new Error(`external user ${p.userId} of ${p.operatorId} vanished after insert`);
      return user;
    },
  };
}

export type PendingSignUps = ReturnType<typeof pendingSignUps>;
