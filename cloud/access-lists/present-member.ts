import type { AccessListMember } from "../../shared/api/access-list.ts";
import {
  type AccessListKind,
  DEFAULT_PERIOD,
  DEFAULT_RECURRING,
  inviteStatus,
  membershipStatus,
  nextPaymentAt,
} from "../../shared/domain/membership.ts";
import type { AccessListInvitesTable, AccessListMembersTable } from "../store/tables/access-list-tables.ts";
import { membershipOf } from "./membership-rows.ts";

/** A joined member as the API shows it, with its status at `now`. */
export function presentMember(
  row: AccessListMembersTable,
  kind: AccessListKind,
  now: Date,
): AccessListMember {
  const m = membershipOf(row);
  const next = nextPaymentAt(m, kind, now);
  return {
    user_id: row.user_id,
    phone_number: "",
    status: membershipStatus(m, now),
    joined_at: row.joined_at,
    expires_at: row.ends_at ?? "",
    ...(kind === "paid"
      ? {
          payment_period: row.payment_period ?? DEFAULT_PERIOD,
          recurring_payment: m.recurring ?? DEFAULT_RECURRING,
          next_payment_at: next?.toISOString() ?? "",
        }
      : {}),
    comment: row.comment,
    external_id: row.external_id ?? "",
  };
}

/** A phone invite: no user yet, the invite's expiry, and the terms the member will join with. */
export function presentInvite(
  row: AccessListInvitesTable,
  kind: AccessListKind,
  now: Date,
): AccessListMember {
  return {
    user_id: "",
    phone_number: row.phone_number,
    status: inviteStatus(row.expires_at, now),
    joined_at: "",
    expires_at: row.expires_at,
    ...(kind === "paid"
      ? {
          payment_period: row.payment_period ?? DEFAULT_PERIOD,
          recurring_payment: row.recurring_payment === null ? DEFAULT_RECURRING : row.recurring_payment === 1,
          next_payment_at: "",
        }
      : {}),
    comment: row.comment,
    external_id: row.external_id ?? "",
  };
}
