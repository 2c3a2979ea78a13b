import type {
  AccessListMember,
  AccessListMemberList,
  AddAccessListMember,
  RemoveAccessListMember,
} from "../../shared/api/access-list.ts";
import { AppError } from "../../shared/api/errors.ts";
import { inviteExpiry, inviteStatus, removeMembership } from "../../shared/domain/membership.ts";
import type { Clock } from "../../shared/time/clock.ts";
import { type AuditOrigin, recordAudit } from "../audit/audit-log.ts";
import { type Principal, requireClient } from "../auth/principal.ts";
import type { Db } from "../store/db.ts";
import {
  type AccessListRecord,
  type AccessListRepository,
  accessListRepository,
  type InviteRecord,
  type MemberRecord,
} from "./access-list-repository.ts";
import { type JoinAsked, joinList, type ListRef } from "./join-list.ts";
import { membershipOf, termsFor } from "./membership-rows.ts";
import { presentInvite, presentMember } from "./present-member.ts";

export const membersUri = (listId: string) => `/access-control/v1/mgmt/access-lists/${listId}/users`;

/** Who a body names, as an audit entry's field: the user id, or the phone number. */
const whoOf = (body: { user_id?: string; phone_number?: string }) =>
  body.user_id !== undefined
    ? { field: "user_id", value: body.user_id }
    : { field: "phone_number", value: body.phone_number as string };

/** Access-list management (spec: Access lists): an operator function, closed to riders' tokens. */
export function createAccessListService(deps: { db: Db; clock: Clock }) {
  const { db, clock } = deps;

  const repo = accessListRepository(db);

  /** Another operator's list, and one the manifest no longer declares, answer as a missing one. */
  async function findList(principal: Principal, id: string): Promise<AccessListRecord> {
    const client = requireClient(principal, "Access-list management");
    const list = await repo.findLive(client.operatorId, id);
    if (!list) throw new AppError("ERRORS.NOT_FOUND", `Access list ${id} not found`);
    return list;
  }

  /** A phone number no user has yet: an invite, renewed (expiry, comment, terms) when asked again. */
  async function invite(
    lists: AccessListRepository,
    list: ListRef,
    phone: string,
    asked: JoinAsked,
    now: Date,
  ) {
    const existing = await lists.invite(list.id, phone);
    const live = existing && inviteStatus(existing.expires_at, now) === "invited";
    if (live && asked.external_id !== undefined && asked.external_id !== existing.external_id) {
      throw new AppError(
        "ERRORS.EXTERNAL_ID_IMMUTABLE",
        "external_id: this invite was made with another external_id (or none), which cannot be changed",
        { field: "external_id" },
      );
    }
    const row: InviteRecord = {
      access_list_id: list.id,
      phone_number: phone,
      operator_id: list.operator_id,
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
    if (existing) await lists.updateInvite(row);
    else await lists.addInviteUnlessPresent(row);
  }

  /** One audit entry on the list, naming who was added or removed (docs/decisions/audit.md). */
  function audit(
    trx: Db,
    origin: AuditOrigin,
    list: AccessListRecord,
    action: "access-list.add" | "access-list.remove",
    body: { user_id?: string; phone_number?: string; remove_now?: boolean },
    now: Date,
  ) {
    const who = whoOf(body);
    const added = action === "access-list.add";
    return recordAudit(
      trx,
      origin,
      {
        operatorId: list.operator_id,
        action,
        subject: { type: "access_list", id: list.id },
        changes: {
          [who.field]: added ? { from: null, to: who.value } : { from: who.value, to: null },
          ...(body.remove_now ? { remove_now: { from: null, to: true } } : {}),
        },
      },
      now,
    );
  }

  async function endMembership(
    lists: AccessListRepository,
    list: AccessListRecord,
    row: MemberRecord,
    now: Date,
    removeNow: boolean,
  ) {
    const m = removeMembership(membershipOf(row), list.kind, removeNow, now);
    await lists.setMembership(list.id, row.user_id, m, {}, now.toISOString());
  }

  return {
    async members(principal: Principal, listId: string): Promise<AccessListMemberList> {
      const list = await findList(principal, listId);
      const now = clock.now();
      const [members, invites] = await Promise.all([repo.members(list.id), repo.invites(list.id)]);
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
    async add(
      principal: Principal,
      listId: string,
      body: AddAccessListMember,
      origin?: AuditOrigin,
    ): Promise<void> {
      const list = await findList(principal, listId);
      const now = clock.now();
      const asked: JoinAsked = {
        terms: termsFor(list.kind, body),
        comment: body.comment,
        external_id: body.external_id,
      };
      await db.transaction().execute(async (trx) => {
        const lists = accessListRepository(trx);
        if (body.user_id !== undefined) {
          const userId = await lists.operatorsUserId(list.operator_id, body.user_id);
          if (userId === undefined)
            throw new AppError("ERRORS.UNKNOWN_USER", "user_id: no user of this operator has this id", {
              field: "user_id",
            });
          await joinList(lists, list, userId, asked, now, "renew");
        } else {
          const phone = body.phone_number as string;
          const userIds = await lists.userIdsWithPhone(list.operator_id, phone);
          if (userIds.length === 0) await invite(lists, list, phone, asked, now);
          for (const id of userIds) await joinList(lists, list, id, asked, now, "renew");
        }
        if (origin) await audit(trx, origin, list, "access-list.add", body, now);
      });
    },

    /**
     * Spec: Remove body. A paid membership ends with its period unless remove_now; closed and password
     * memberships and invites end at once. Someone who is neither a member nor invited: 400.
     */
    async remove(
      principal: Principal,
      listId: string,
      body: RemoveAccessListMember,
      origin?: AuditOrigin,
    ): Promise<void> {
      const list = await findList(principal, listId);
      const now = clock.now();
      const removeNow = body.remove_now ?? false;
      await db.transaction().execute(async (trx) => {
        const lists = accessListRepository(trx);
        const userIds =
          body.user_id !== undefined
            ? [body.user_id]
            : await lists.userIdsWithPhone(list.operator_id, body.phone_number as string);
        const members = await lists.membersAmong(list.id, userIds);
        const cancelled =
          body.phone_number === undefined ? 0 : await lists.dropInvite(list.id, body.phone_number);
        if (members.length === 0 && cancelled === 0) {
          const who = body.user_id !== undefined ? "user_id" : "phone_number";
          throw new AppError("ERRORS.NOT_A_MEMBER", `${who}: not a member of this list nor invited to it`, {
            field: who,
          });
        }
        for (const m of members) await endMembership(lists, list, m, now, removeNow);
        if (origin) await audit(trx, origin, list, "access-list.remove", body, now);
      });
    },
  };
}

export type AccessListService = ReturnType<typeof createAccessListService>;
