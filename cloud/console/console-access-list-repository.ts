import type { Executor } from "../store/db.ts";
import type { AccessListMembersTable, AccessListsTable } from "../store/tables/access-list-tables.ts";
import type { OperatorScope } from "./console-location-repository.ts";

/** A list with its location's code and label. */
export type ListAt = AccessListsTable & { code: string; label: string };

/** What the console's access-list views read beside the access-list service: across operators. */
export function consoleAccessListRepository(db: Executor) {
  return {
    /** The lists in force of the operators in scope, by name (ties by id). */
    listsOf(scope: OperatorScope): Promise<ListAt[]> {
      let q = db
        .selectFrom("access_lists as a")
        .innerJoin("locations as l", "l.id", "a.location_id")
        .selectAll("a")
        .select(["l.code", "l.label"])
        .where("a.retired_at", "is", null)
        .orderBy("a.name")
        .orderBy("a.id");
      if (scope !== "all") {
        if (scope.length === 0) return Promise.resolve([]);
        q = q.where("a.operator_id", "in", scope);
      }
      return q.execute();
    },

    /** One list in force, any operator's (the service decides who may read it). */
    listAt(id: string): Promise<ListAt | undefined> {
      return db
        .selectFrom("access_lists as a")
        .innerJoin("locations as l", "l.id", "a.location_id")
        .selectAll("a")
        .select(["l.code", "l.label"])
        .where("a.id", "=", id)
        .where("a.retired_at", "is", null)
        .executeTakeFirst();
    },

    /** The memberships of these lists, as stored. */
    async membersOf(ids: readonly string[]): Promise<AccessListMembersTable[]> {
      if (ids.length === 0) return [];
      return await db
        .selectFrom("access_list_members")
        .selectAll()
        .where("access_list_id", "in", ids)
        .execute();
    },

    /** How many invites each of these lists has (none: left out). */
    async inviteCounts(ids: readonly string[]): Promise<Map<string, number>> {
      if (ids.length === 0) return new Map();
      const rows = await db
        .selectFrom("access_list_invites")
        .select((eb) => ["access_list_id", eb.fn.countAll<number | string>().as("n")])
        .where("access_list_id", "in", ids)
        .groupBy("access_list_id")
        .execute();
      return new Map(rows.map((r) => [r.access_list_id, Number(r.n)]));
    },
  };
}
