import type { AccessListKind, Membership, TermsAsked } from "../../shared/domain/membership.ts";
import type { AccessListMembersTable } from "../store/tables/access-list-tables.ts";

/** The stored row's membership facts, for the pure rules of shared/domain/membership.ts. */
export function membershipOf(row: AccessListMembersTable): Membership {
  return {
    joinedAt: row.joined_at,
    period: row.payment_period,
    recurring: row.recurring_payment === null ? null : row.recurring_payment === 1,
    periodAnchor: row.period_anchor,
    endsAt: row.ends_at,
    endReason: row.end_reason,
  };
}

/** The columns that hold a membership's facts. */
export function membershipColumns(m: Membership) {
  return {
    joined_at: m.joinedAt,
    payment_period: m.period,
    recurring_payment: m.recurring === null ? null : m.recurring ? 1 : 0,
    period_anchor: m.periodAnchor,
    ends_at: m.endsAt,
    end_reason: m.endReason,
  };
}

/** payment_period and recurring_payment count on paid lists only (spec: Add body, rule 4). */
export function termsFor(
  kind: AccessListKind,
  asked: { payment_period?: TermsAsked["period"]; recurring_payment?: boolean },
): TermsAsked {
  if (kind !== "paid") return {};
  return { period: asked.payment_period, recurring: asked.recurring_payment };
}
