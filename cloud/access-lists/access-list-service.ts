import type {
  AccessListMember,
  AccessListMemberList,
  AddAccessListMember,
  RemoveAccessListMember,
} from "../../shared/api/access-list.ts";
import { AppError } from "../../shared/api/errors.ts";
import { inviteExpiry, inviteStatus, removeMembership } from "../../shared/domain/membership.ts";
import type { Clock } from "../../shared/time/clock.ts";
import { type Principal, requireClient } from "../auth/principal.ts";
import type { Db } from "../store/db.ts";
import type {
  AccessListInvitesTable,
  AccessListMembersTable,
  AccessListsTable,
} from "../store/tables/access-list-tables.ts";
import { type JoinAsked, joinList, type ListRef } from "./join-list.ts";
import { membershipColumns, membershipOf, termsFor } from "./membership-rows.ts";
import { presentInvite, presentMember } from "./present-member.ts";

export const membersUri = (listId: string) => `/access-control/v1/mgmt/access-lists/${listId}/users`;

/** Access-list management (spec: Access lists): an operator function, closed to riders' tokens. */
export function createAccessListService(deps: { db: Db; clock: Clock }) {
  const { db, clock } = deps;

  /** Another operator's list, and one the manifest no longer declares, answer as a missing one. */
  async function findList(principal: Principal, id: string): Promise<AccessListsTable> {
    const client = requireClient(principal, "Access-list management");
    const list = await db
      .selectFrom("access_lists")
      .selectAll()
      .where("id", "=", id)
      .where("operator_id", "=", client.operatorId)
      .where("retired_at", "is", null)
      .executeTakeFirst();
    if (!list) throw new AppError("ERRORS.NOT_FOUND", `Access list ${id} not found`);
    return list;
  }

  /** The operator's users with this phone number (sign-in records it: docs/decisions/external-users.md). */
  function usersWithPhone(trx: Db, operatorId: string, phone: string) {
    return trx
      .selectFrom("external_users")
      .select("id")
      .where("operator_id", "=", operatorId)
      .where("phone_number", "=", phone)
      .orderBy("id")
      .execute();
  }

  /** A phone number no user has yet: an invite, renewed (expiry, comment, terms) when asked again. */
  async function invite(trx: Db, list: ListRef, phone: string, asked: JoinAsked, now: Date) {
    const existing = await trx
      .selectFrom("access_list_invites")
      .selectAll()
      .where("access_list_id", "=", list.id)
      .where("phone_number", "=", phone)
      .executeTakeFirst();
    const live = existing && inviteStatus(existing.expires_at, now) === "invited";
    if (live && asked.external_id !== undefined && asked.external_id !== existing.external_id) {
      throw new AppError(
        "ERRORS.EXTERNAL_ID_IMMUTABLE",
        "external_id: this invite was made with another external_id (or none), which cannot be changed",
        { field: "external_id" },
      );
    }
    const row: Omit<AccessListInvitesTable, "access_list_id" | "phone_number" | "operator_id"> = {
      payment_period: asked.terms.period ?? (live ? existing.payment_period : null),
      recurring_payment:
        asked.terms.recurring !== undefined
          ? Number(asked.terms.recurring)
          : live
            ? existing.recurring_payment
            : null,
      comment: asked.comment ?? (live ? existing.comment : ""),
      external_id: live ? existing.external_id : (asked.external_id ?? null),
      created_at: live ? existing.created_at : now.toISOString(),
      expires_at: inviteExpiry(now),
    };
    if (existing) {
      await trx
        .updateTable("access_list_invites")
        .set(row)
        .where("access_list_id", "=", list.id)
        .where("phone_number", "=", phone)
        .execute();
      return;
    }
    await trx
      .insertInto("access_list_invites")
      .values({ ...row, access_list_id: list.id, phone_number: phone, operator_id: list.operator_id })
      .onConflict((oc) => oc.columns(["access_list_id", "phone_number"]).doNothing())
      .execute();
  }

  async function endMembership(
    trx: Db,
    list: AccessListsTable,
    row: AccessListMembersTable,
    now: Date,
    removeNow: boolean,
  ) {
    const m = removeMembership(membershipOf(row), list.kind, removeNow, now);
    await trx
      .updateTable("access_list_members")
      .set({ ...membershipColumns(m), updated_at: now.toISOString() })
      .where("access_list_id", "=", list.id)
      .where("user_id", "=", row.user_id)
      .execute();
  }

  return {
    async members(principal: Principal, listId: string): Promise<AccessListMemberList> {
      const list = await findList(principal, listId);
      const now = clock.now();
      const [members, invites] = await Promise.all([
        db
          .selectFrom("access_list_members")
          .selectAll()
          .where("access_list_id", "=", list.id)
          .orderBy("joined_at")
          .orderBy("user_id")
          .execute(),
        db
          .selectFrom("access_list_invites")
          .selectAll()
          .where("access_list_id", "=", list.id)
          .orderBy("created_at")
          .orderBy("phone_number")
          .execute(),
      ]);
      const data: AccessListMember[] = [
        ...members.map((m) => presentMember(m, list.kind, now)),
        ...invites.map((i) => presentInvite(i, list.kind, now)),
      ];
      return { data, uri: membersUri(list.id) };
    },

    /**
     * Spec: Add body. A user id names a user of this operator; a phone number adds the users who have it
     * at once, or else invites it.
     */
    async add(principal: Principal, listId: string, body: AddAccessListMember): Promise<void> {
      const list = await findList(principal, listId);
      const now = clock.now();
      const asked: JoinAsked = {
        terms: termsFor(list.kind, body),
        comment: body.comment,
        external_id: body.external_id,
      };
      await db.transaction().execute(async (trx) => {
        if (body.user_id !== undefined) {
          const user = await trx
            .selectFrom("external_users")
            .select("id")
            .where("id", "=", body.user_id)
            .where("operator_id", "=", list.operator_id)
            .executeTakeFirst();
          if (!user)
            throw new AppError("ERRORS.UNKNOWN_USER", "user_id: no user of this operator has this id", {
              field: "user_id",
            });
          await joinList(trx, list, user.id, asked, now, "renew");
          return;
        }
        const phone = body.phone_number as string;
        const users = await usersWithPhone(trx, list.operator_id, phone);
        if (users.length === 0) return invite(trx, list, phone, asked, now);
        for (const u of users) await joinList(trx, list, u.id, asked, now, "renew");
      });
    },

    /**
     * Spec: Remove body. A paid membership ends with its period unless remove_now; closed and password
     * memberships and invites end at once. Someone who is neither a member nor invited: 400.
     */
    async remove(principal: Principal, listId: string, body: RemoveAccessListMember): Promise<void> {
      const list = await findList(principal, listId);
      const now = clock.now();
      const removeNow = body.remove_now ?? false;
      await db.transaction().execute(async (trx) => {
        const userIds =
          body.user_id !== undefined
            ? [body.user_id]
            : (await usersWithPhone(trx, list.operator_id, body.phone_number as string)).map((u) => u.id);
        const members =
          userIds.length === 0
            ? []
            : await trx
                .selectFrom("access_list_members")
                .selectAll()
                .where("access_list_id", "=", list.id)
                .where("user_id", "in", userIds)
                .execute();
        const cancelled =
          body.phone_number === undefined
            ? 0
            : Number(
                (
                  await trx
                    .deleteFrom("access_list_invites")
                    .where("access_list_id", "=", list.id)
                    .where("phone_number", "=", body.phone_number)
                    .executeTakeFirst()
                ).numDeletedRows,
              );
        if (members.length === 0 && cancelled === 0) {
          const who = body.user_id !== undefined ? "user_id" : "phone_number";
          throw new AppError("ERRORS.NOT_A_MEMBER", `${who}: not a member of this list nor invited to it`, {
            field: who,
          });
        }
        for (const m of members) await endMembership(trx, list, m, now, removeNow);
      });
    },
  };
}

export type AccessListService = ReturnType<typeof createAccessListService>;
