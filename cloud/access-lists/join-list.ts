import { AppError } from "../../shared/api/errors.ts";
import {
  type AccessListKind,
  grantsAccess,
  membershipStatus,
  newMembership,
  renewMembership,
  type TermsAsked,
} from "../../shared/domain/membership.ts";
import type { AccessListRepository } from "./access-list-repository.ts";
import { membershipOf } from "./membership-rows.ts";

export type ListRef = { id: string; operator_id: string; kind: AccessListKind };

export type JoinAsked = { terms: TermsAsked; comment?: string; external_id?: string };

/**
 * Makes a user a member of a list (inside the caller's transaction). A current member is added again:
 * with `renew` their comment and terms are updated and a removal at the period end is withdrawn, and a
 * different external_id is refused; with `keep` (an invite meeting an existing membership) nothing
 * changes. Anyone else, including a removed or expired member, starts a new membership.
 */
export async function joinList(
  lists: AccessListRepository,
  list: ListRef,
  userId: string,
  asked: JoinAsked,
  now: Date,
  onCurrent: "renew" | "keep",
): Promise<void> {
  const ts = now.toISOString();
  const existing = await lists.member(list.id, userId);
  if (existing && grantsAccess(membershipStatus(membershipOf(existing), now))) {
    if (onCurrent === "keep") return;
    if (asked.external_id !== undefined && asked.external_id !== existing.external_id) {
      throw new AppError(
        "ERRORS.EXTERNAL_ID_IMMUTABLE",
        existing.external_id === null
          ? "external_id: this member was added without one, and it cannot be set afterwards"
          : "external_id: this member was added with another external_id, which cannot be changed",
        { field: "external_id" },
      );
    }
    const m = renewMembership(membershipOf(existing), list.kind, asked.terms, now);
    await lists.setMembership(list.id, userId, m, { comment: asked.comment ?? existing.comment }, ts);
    return;
  }
  const m = newMembership(list.kind, asked.terms, now);
  const about = { comment: asked.comment ?? "", external_id: asked.external_id ?? null };
  if (existing) {
    await lists.setMembership(list.id, userId, m, about, ts);
    return;
  }
  // Two adds racing for one user: the first one's membership stands, the second finds it done.
  await lists.addMemberUnlessPresent(list, userId, m, about, ts);
}
