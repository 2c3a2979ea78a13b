/**
 * Access-list membership (spec: Access-list member, Access-list membership status) as pure functions of
 * what is stored and `now`: statuses that depend on time (a paid period ending, an invite lapsing) are
 * derived on every read, never written by a sweeper, so they are right at any instant.
 */

export const ACCESS_LIST_KINDS = ["paid", "closed", "password"] as const;
export type AccessListKind = (typeof ACCESS_LIST_KINDS)[number];

export const PAYMENT_PERIODS = ["day", "week", "month"] as const;
export type PaymentPeriod = (typeof PAYMENT_PERIODS)[number];

export const MEMBERSHIP_STATUSES = [
  "included:active",
  "included:cancelled",
  "included:pending_payment",
  "included:pending_approval",
  "included:payment_failed",
  "included:payment_needs_approval",
  "excluded:expired",
  "excluded:removed",
  "invited",
] as const;
export type MembershipStatus = (typeof MEMBERSHIP_STATUSES)[number];

/** included:* means the member currently has access (spec). */
export const grantsAccess = (s: MembershipStatus): boolean => s.startsWith("included:");

/** What is stored of one membership; times are RFC 3339 UTC. */
export type Membership = {
  joinedAt: string;
  /** Paid lists: the billing period and whether it renews; null on closed and password lists. */
  period: PaymentPeriod | null;
  recurring: boolean | null;
  /** Periods run from here: the join, or where a changed period took over. */
  periodAnchor: string | null;
  /** When access ends (a period end or a removal), and why; null while it runs on. */
  endsAt: string | null;
  endReason: "expired" | "removed" | null;
};

/** Payment terms as asked for in an add request; only paid lists use them. */
export type TermsAsked = { period?: PaymentPeriod; recurring?: boolean };

/** Terms a paid-list member gets when the add names none (docs/decisions/access-lists.md). */
export const DEFAULT_PERIOD: PaymentPeriod = "month";
export const DEFAULT_RECURRING = true;

/** How long a phone invite waits for its person's sign-in (docs/decisions/access-lists.md). */
export const INVITE_LIFETIME_MS = 30 * 24 * 3600_000;

const DAY_MS = 24 * 3600_000;

function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month + 1, 0)).getUTCDate();
}

/** `anchor` plus k periods, in UTC; a month keeps the anchor's day, or the month's last day if shorter. */
export function addPeriods(anchor: Date, period: PaymentPeriod, k: number): Date {
  if (period === "day") return new Date(anchor.getTime() + k * DAY_MS);
  if (period === "week") return new Date(anchor.getTime() + k * 7 * DAY_MS);
  const y = anchor.getUTCFullYear();
  const m = anchor.getUTCMonth() + k;
  const year = y + Math.floor(m / 12);
  const month = ((m % 12) + 12) % 12;
  const day = Math.min(anchor.getUTCDate(), daysInMonth(year, month));
  return new Date(
    Date.UTC(
      year,
      month,
      day,
      anchor.getUTCHours(),
      anchor.getUTCMinutes(),
      anchor.getUTCSeconds(),
      anchor.getUTCMilliseconds(),
    ),
  );
}

/** The end of the period running at `now`: the first boundary after it (the anchor itself before it). */
export function periodEndAfter(anchor: Date, period: PaymentPeriod, now: Date): Date {
  if (now.getTime() < anchor.getTime()) return anchor;
  if (period !== "month") {
    const len = period === "day" ? DAY_MS : 7 * DAY_MS;
    return new Date(anchor.getTime() + (Math.floor((now.getTime() - anchor.getTime()) / len) + 1) * len);
  }
  // Boundaries are counted from the anchor, so a 31st keeps coming back after shorter months.
  let k = Math.max(
    1,
    (now.getUTCFullYear() - anchor.getUTCFullYear()) * 12 + now.getUTCMonth() - anchor.getUTCMonth(),
  );
  while (k > 1 && addPeriods(anchor, period, k - 1).getTime() > now.getTime()) k--;
  while (addPeriods(anchor, period, k).getTime() <= now.getTime()) k++;
  return addPeriods(anchor, period, k);
}

const paidTerms = (m: Membership) => ({
  period: m.period ?? DEFAULT_PERIOD,
  recurring: m.recurring ?? DEFAULT_RECURRING,
  anchor: new Date(m.periodAnchor ?? m.joinedAt),
});

/** The status at `now`. The payment statuses (pending_payment and the like) need a membership payment flow. */
export function membershipStatus(m: Membership, now: Date): MembershipStatus {
  if (m.endsAt !== null && now.getTime() >= Date.parse(m.endsAt))
    return m.endReason === "removed" ? "excluded:removed" : "excluded:expired";
  return m.endReason === "removed" ? "included:cancelled" : "included:active";
}

/** When the next payment falls due: a running, renewing paid membership only. */
export function nextPaymentAt(m: Membership, kind: AccessListKind, now: Date): Date | null {
  if (kind !== "paid" || m.endsAt !== null) return null;
  const t = paidTerms(m);
  return t.recurring ? periodEndAfter(t.anchor, t.period, now) : null;
}

/** A membership starting at `now`. A paid one that does not renew ends with its first period. */
export function newMembership(kind: AccessListKind, asked: TermsAsked, now: Date): Membership {
  const joinedAt = now.toISOString();
  if (kind !== "paid")
    return { joinedAt, period: null, recurring: null, periodAnchor: null, endsAt: null, endReason: null };
  const period = asked.period ?? DEFAULT_PERIOD;
  const recurring = asked.recurring ?? DEFAULT_RECURRING;
  return {
    joinedAt,
    period,
    recurring,
    periodAnchor: joinedAt,
    endsAt: recurring ? null : addPeriods(now, period, 1).toISOString(),
    endReason: recurring ? null : "expired",
  };
}

/**
 * Adding a current member again: a removal waiting for the period end is withdrawn, and new payment terms
 * take over when the running period ends (a member who stops renewing keeps the period paid for).
 */
export function renewMembership(
  m: Membership,
  kind: AccessListKind,
  asked: TermsAsked,
  now: Date,
): Membership {
  if (kind !== "paid") return { ...m, endsAt: null, endReason: null };
  const t = paidTerms(m);
  const period = asked.period ?? t.period;
  const recurring = asked.recurring ?? t.recurring;
  const anchor = period === t.period ? t.anchor : periodEndAfter(t.anchor, t.period, now);
  return {
    ...m,
    period,
    recurring,
    periodAnchor: anchor.toISOString(),
    endsAt: recurring ? null : periodEndAfter(anchor, period, now).toISOString(),
    endReason: recurring ? null : "expired",
  };
}

/**
 * Removing a member (spec: Remove body, rules 3 and 4): a paid membership ends with the running period
 * unless `removeNow`; closed and password ones end at once. A membership already over stays as it is.
 */
export function removeMembership(
  m: Membership,
  kind: AccessListKind,
  removeNow: boolean,
  now: Date,
): Membership {
  if (!grantsAccess(membershipStatus(m, now))) return m;
  if (kind !== "paid" || removeNow) return { ...m, endsAt: now.toISOString(), endReason: "removed" };
  const t = paidTerms(m);
  const periodEnd = periodEndAfter(t.anchor, t.period, now).getTime();
  const endsAt = m.endsAt === null ? periodEnd : Math.min(periodEnd, Date.parse(m.endsAt));
  return { ...m, endsAt: new Date(endsAt).toISOString(), endReason: "removed" };
}

/** A phone invite waits until its expiry, then shows as expired until it is renewed or removed. */
export function inviteStatus(expiresAt: string, now: Date): MembershipStatus {
  return now.getTime() < Date.parse(expiresAt) ? "invited" : "excluded:expired";
}

export function inviteExpiry(now: Date): string {
  return new Date(now.getTime() + INVITE_LIFETIME_MS).toISOString();
}
