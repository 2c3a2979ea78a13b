import type { AccessListKind, Membership } from "../../shared/domain/membership.ts";
import type { Db, Executor } from "../store/db.ts";
import type {
  AccessListInvitesTable,
  AccessListMembersTable,
  AccessListsTable,
} from "../store/tables/access-list-tables.ts";
import { membershipColumns } from "./membership-rows.ts";

export type AccessListRecord = AccessListsTable;
export type MemberRecord = AccessListMembersTable;
export type InviteRecord = AccessListInvitesTable;

/** A pending invite with the kind of the list it is for. */
export type ListInvite = Pick<
  InviteRecord,
  "access_list_id" | "payment_period" | "recurring_payment" | "comment" | "external_id"
> & { kind: AccessListKind };

/** The store or a transaction of it, with deletes: used-up and cancelled invites go. */
type Store = Executor & Pick<Db, "deleteFrom">;

/** Access lists, their members and their phone invites. */
export function accessListRepository(db: Store) {
  return {
    /** Any operator's list, retired or not: the manifest checks who owns an id. */
    find(id: string): Promise<AccessListRecord | undefined> {
      return db.selectFrom("access_lists").selectAll().where("id", "=", id).executeTakeFirst();
    },

    /** The operator's list, unless retired: another operator's is as missing as one that does not exist. */
    findLive(operatorId: string, id: string): Promise<AccessListRecord | undefined> {
      return db
        .selectFrom("access_lists")
        .selectAll()
        .where("id", "=", id)
        .where("operator_id", "=", operatorId)
        .where("retired_at", "is", null)
        .executeTakeFirst();
    },

    /** The ids of the operator's lists in force at a location. */
    async liveIdsAt(operatorId: string, locationId: string): Promise<string[]> {
      const rows = await db
        .selectFrom("access_lists")
        .select("id")
        .where("location_id", "=", locationId)
        .where("operator_id", "=", operatorId)
        .where("retired_at", "is", null)
        .execute();
      return rows.map((r) => r.id);
    },

    async insert(list: AccessListRecord): Promise<void> {
      await db.insertInto("access_lists").values(list).execute();
    },

    /** Moves a list to a location, kind and name, and brings it back if it was retired. */
    async redeclare(
      id: string,
      declared: Pick<AccessListRecord, "location_id" | "kind" | "name">,
      at: string,
    ): Promise<void> {
      await db
        .updateTable("access_lists")
        .set({ ...declared, retired_at: null, updated_at: at })
        .where("id", "=", id)
        .execute();
    },

    /** Retires the location's lists in force but those kept; returns how many. */
    async retireAtExcept(locationId: string, keep: readonly string[], at: string): Promise<number> {
      let retire = db
        .updateTable("access_lists")
        .set({ retired_at: at, updated_at: at })
        .where("location_id", "=", locationId)
        .where("retired_at", "is", null);
      if (keep.length > 0) retire = retire.where("id", "not in", keep);
      return Number((await retire.executeTakeFirst()).numUpdatedRows);
    },

    /** The operator's user with this service_user_id, as stored: only they may be added to its lists. */
    async operatorsUserId(operatorId: string, userId: string): Promise<string | undefined> {
      const row = await db
        .selectFrom("external_users")
        .select("id")
        .where("id", "=", userId)
        .where("operator_id", "=", operatorId)
        .executeTakeFirst();
      return row?.id;
    },

    /** The operator's users with this phone number, by id (sign-in records it: docs/decisions/external-users.md). */
    async userIdsWithPhone(operatorId: string, phone: string): Promise<string[]> {
      const rows = await db
        .selectFrom("external_users")
        .select("id")
        .where("operator_id", "=", operatorId)
        .where("phone_number", "=", phone)
        .orderBy("id")
        .execute();
      return rows.map((r) => r.id);
    },

    /** The list's members, in the order they joined (ties by user id). */
    members(listId: string): Promise<MemberRecord[]> {
      return db
        .selectFrom("access_list_members")
        .selectAll()
        .where("access_list_id", "=", listId)
        .orderBy("joined_at")
        .orderBy("user_id")
        .execute();
    },

    member(listId: string, userId: string): Promise<MemberRecord | undefined> {
      return db
        .selectFrom("access_list_members")
        .selectAll()
        .where("access_list_id", "=", listId)
        .where("user_id", "=", userId)
        .executeTakeFirst();
    },

    /** The list's memberships of these users (none asked: none). */
    async membersAmong(listId: string, userIds: readonly string[]): Promise<MemberRecord[]> {
      if (userIds.length === 0) return [];
      return await db
        .selectFrom("access_list_members")
        .selectAll()
        .where("access_list_id", "=", listId)
        .where("user_id", "in", userIds)
        .execute();
    },

    /** The user's memberships of these lists (none asked: none). */
    async membershipsOf(userId: string, listIds: readonly string[]): Promise<MemberRecord[]> {
      if (listIds.length === 0) return [];
      return await db
        .selectFrom("access_list_members")
        .selectAll()
        .where("user_id", "=", userId)
        .where("access_list_id", "in", listIds)
        .execute();
    },

    /** Adds a member, or writes nothing when the user already has a membership of the list. */
    async addMemberUnlessPresent(
      list: { id: string; operator_id: string },
      userId: string,
      m: Membership,
      about: { comment: string; external_id: string | null },
      at: string,
    ): Promise<void> {
      await db
        .insertInto("access_list_members")
        .values({
          ...membershipColumns(m),
          ...about,
          updated_at: at,
          access_list_id: list.id,
          user_id: userId,
          operator_id: list.operator_id,
        })
        .onConflict((oc) => oc.columns(["access_list_id", "user_id"]).doNothing())
        .execute();
    },

    /** Writes a member's membership facts, and their comment and external_id when given. */
    async setMembership(
      listId: string,
      userId: string,
      m: Membership,
      about: { comment?: string; external_id?: string | null },
      at: string,
    ): Promise<void> {
      await db
        .updateTable("access_list_members")
        .set({ ...membershipColumns(m), ...about, updated_at: at })
        .where("access_list_id", "=", listId)
        .where("user_id", "=", userId)
        .execute();
    },

    /** The list's invites, oldest first (ties by phone number). */
    invites(listId: string): Promise<InviteRecord[]> {
      return db
        .selectFrom("access_list_invites")
        .selectAll()
        .where("access_list_id", "=", listId)
        .orderBy("created_at")
        .orderBy("phone_number")
        .execute();
    },

    invite(listId: string, phone: string): Promise<InviteRecord | undefined> {
      return db
        .selectFrom("access_list_invites")
        .selectAll()
        .where("access_list_id", "=", listId)
        .where("phone_number", "=", phone)
        .executeTakeFirst();
    },

    /** Writes an invite, or nothing when the phone number is already invited to the list. */
    async addInviteUnlessPresent(invite: InviteRecord): Promise<void> {
      await db
        .insertInto("access_list_invites")
        .values(invite)
        .onConflict((oc) => oc.columns(["access_list_id", "phone_number"]).doNothing())
        .execute();
    },

    async updateInvite(invite: InviteRecord): Promise<void> {
      const { access_list_id, phone_number, operator_id: _, ...rest } = invite;
      await db
        .updateTable("access_list_invites")
        .set(rest)
        .where("access_list_id", "=", access_list_id)
        .where("phone_number", "=", phone_number)
        .execute();
    },

    /** Removes the phone number's invite to the list; returns how many went (0 or 1). */
    async dropInvite(listId: string, phone: string): Promise<number> {
      const res = await db
        .deleteFrom("access_list_invites")
        .where("access_list_id", "=", listId)
        .where("phone_number", "=", phone)
        .executeTakeFirst();
      return Number(res.numDeletedRows);
    },

    /**
     * The operator's invites of this phone number not expired at `now`, to lists of the operator still in
     * force, in list id order.
     */
    pendingInvitesOf(operatorId: string, phone: string, now: Date): Promise<ListInvite[]> {
      return db
        .selectFrom("access_list_invites as i")
        .innerJoin("access_lists as l", "l.id", "i.access_list_id")
        .select([
          "i.access_list_id",
          "i.payment_period",
          "i.recurring_payment",
          "i.comment",
          "i.external_id",
          "l.kind",
        ])
        .where("i.operator_id", "=", operatorId)
        .where("l.operator_id", "=", operatorId)
        .where("i.phone_number", "=", phone)
        .where("i.expires_at", ">", now.toISOString())
        .where("l.retired_at", "is", null)
        .orderBy("i.access_list_id")
        .execute();
    },
  };
}

export type AccessListRepository = ReturnType<typeof accessListRepository>;
