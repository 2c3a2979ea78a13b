import { AppError } from "../../shared/api/errors.ts";
import {
  type AccessListKind,
  grantsAccess,
  membershipStatus,
  newMembership,
  renewMembership,
  type TermsAsked,
} from "../../shared/domain/membership.ts";
import type { Db } from "../store/db.ts";
import { membershipColumns, membershipOf } from "./membership-rows.ts";

export type ListRef = { id: string; operator_id: string; kind: AccessListKind };

export type JoinAsked = { terms: TermsAsked; comment?: string; external_id?: string };

/**
 * Makes a user a member of a list (inside the caller's transaction). A current member is added again:
 * with `renew` their comment and terms are updated and a removal at the period end is withdrawn, and a
 * different external_id is refused; with `keep` (an invite meeting an existing membership) nothing
 * changes. Anyone else, including a removed or expired member, starts a new membership.
 */
export async function joinList(
  trx: Db,
  list: ListRef,
  userId: string,
  asked: JoinAsked,
  now: Date,
  onCurrent: "renew" | "keep",
): Promise<void> {
  const ts = now.toISOString();
  const existing = await trx
    .selectFrom("access_list_members")
    .selectAll()
    .where("access_list_id", "=", list.id)
    .where("user_id", "=", userId)
    .executeTakeFirst();
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
    await trx
      .updateTable("access_list_members")
      .set({ ...membershipColumns(m), comment: asked.comment ?? existing.comment, updated_at: ts })
      .where("access_list_id", "=", list.id)
      .where("user_id", "=", userId)
      .execute();
    return;
  }
  const row = {
    ...membershipColumns(newMembership(list.kind, asked.terms, now)),
    comment: asked.comment ?? "",
    external_id: asked.external_id ?? null,
    updated_at: ts,
  };
  if (existing) {
    await trx
      .updateTable("access_list_members")
      .set(row)
      .where("access_list_id", "=", list.id)
      .where("user_id", "=", userId)
      .execute();
    return;
  }
  // Two adds racing for one user: the first one's membership stands, the second finds it done.
  await trx
    .insertInto("access_list_members")
    .values({ ...row, access_list_id: list.id, user_id: userId, operator_id: list.operator_id })
    .onConflict((oc) => oc.columns(["access_list_id", "user_id"]).doNothing())
    .execute();
}
