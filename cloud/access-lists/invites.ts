import { toE164 } from "../../shared/api/phone-number.ts";
import type { Clock } from "../../shared/time/clock.ts";
import type { Db } from "../store/db.ts";
import { accessListRepository } from "./access-list-repository.ts";
import { joinList } from "./join-list.ts";

/**
 * Turns the pending phone invites of this operator that match the user's phone number into memberships
 * (spec: "An invited member is added automatically on the invited person's next sign-in"). Called after
 * every successful sign-in; does nothing when the user has no known phone number. An invite past its
 * expiry, or of a list the manifest no longer declares, stays as it is; a user already a current member
 * keeps their membership and the invite is used up.
 */
export async function applyPendingInvites(
  deps: { db: Db; clock: Clock },
  user: { id: string; operatorId: string; phoneNumber: string | null },
): Promise<void> {
  const phone = user.phoneNumber === null ? null : toE164(user.phoneNumber);
  if (phone === null) return;
  const now = deps.clock.now();
  await deps.db.transaction().execute(async (trx) => {
    const lists = accessListRepository(trx);
    const invites = await lists.pendingInvitesOf(user.operatorId, phone, now);
    for (const inv of invites) {
      const list = { id: inv.access_list_id, operator_id: user.operatorId, kind: inv.kind };
      const terms =
        inv.kind === "paid"
          ? {
              period: inv.payment_period ?? undefined,
              recurring: inv.recurring_payment === null ? undefined : inv.recurring_payment === 1,
            }
          : {};
      await joinList(
        lists,
        list,
        user.id,
        { terms, comment: inv.comment, external_id: inv.external_id ?? undefined },
        now,
        "keep",
      );
      await lists.dropInvite(inv.access_list_id, phone);
    }
  });
}
