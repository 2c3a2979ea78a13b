import type {
  ConsoleAccessList,
  ConsoleAccessListList,
  ConsoleAccessListSummary,
} from "../../shared/api/console-access-lists.ts";
import { grantsAccess, inviteStatus, membershipStatus } from "../../shared/domain/membership.ts";
import { operatorsSeenBy, type StaffScope } from "../../shared/domain/staff-roles.ts";
import type { Clock } from "../../shared/time/clock.ts";
import { accessListRepository } from "../access-lists/access-list-repository.ts";
import type { AccessListService } from "../access-lists/access-list-service.ts";
import { membershipOf } from "../access-lists/membership-rows.ts";
import type { ClientPrincipal } from "../auth/principal.ts";
import type { Db } from "../store/db.ts";
import { consoleAccessListRepository, type ListAt } from "./console-access-list-repository.ts";

const about = (l: ListAt) => ({
  id: l.id,
  operator_id: l.operator_id,
  name: l.name,
  kind: l.kind,
  location_id: l.location_id,
  location: `#${l.code} ${l.label}`,
});

/**
 * The console's access-list views (docs/decisions/console.md): the members as the access-list service lists
 * them, and the phone invites with when they were made, which the public member resource does not carry.
 */
export function createConsoleAccessLists(deps: { db: Db; clock: Clock; lists: AccessListService }) {
  const repo = consoleAccessListRepository(deps.db);

  return {
    /** The lists in force of the operators the staff member reads, with their counts. */
    async list(staff: StaffScope): Promise<ConsoleAccessListList> {
      const lists = await repo.listsOf(operatorsSeenBy(staff));
      const ids = lists.map((l) => l.id);
      const [members, invites] = await Promise.all([repo.membersOf(ids), repo.inviteCounts(ids)]);
      const now = deps.clock.now();
      const data: ConsoleAccessListSummary[] = lists.map((l) => {
        const mine = members.filter((m) => m.access_list_id === l.id);
        return {
          ...about(l),
          included: mine.filter((m) => grantsAccess(membershipStatus(membershipOf(m), now))).length,
          members: mine.length,
          invites: invites.get(l.id) ?? 0,
        };
      });
      return { data };
    },

    /** One list through the access-list service (another operator's, or a retired one: 404). */
    async get(principal: ClientPrincipal, id: string): Promise<ConsoleAccessList> {
      const { data } = await deps.lists.members(principal, id);
      const list = await repo.listAt(id);
      if (!list) throw new Error(`access list ${id} vanished while read`);
      const now = deps.clock.now();
      const invites = await accessListRepository(deps.db).invites(list.id);
      return {
        ...about(list),
        members: data.filter((m) => m.user_id !== "").map(({ phone_number: _, ...m }) => m),
        invites: invites.map((i) => ({
          phone_number: i.phone_number,
          status: inviteStatus(i.expires_at, now),
          created_at: i.created_at,
          expires_at: i.expires_at,
          comment: i.comment,
          external_id: i.external_id ?? "",
        })),
        now: now.toISOString(),
      };
    },

    /** Whose list this is: the staff member's own operator, or for a superadmin the owner's. */
    async operatorFor(own: string | null, id: string): Promise<string | undefined> {
      return own ?? (await accessListRepository(deps.db).find(id))?.operator_id;
    },
  };
}

export type ConsoleAccessLists = ReturnType<typeof createConsoleAccessLists>;
