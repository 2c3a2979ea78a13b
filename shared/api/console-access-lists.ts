/**
 * The console's access-list answers (cloud/http/routes/console-access-lists.ts): types only, so the
 * console's bundle imports no schema library.
 */
import type { AccessListKind, MembershipStatus, PaymentPeriod } from "../domain/membership.ts";

/** One access list in the list. */
export type ConsoleAccessListSummary = {
  id: string;
  operator_id: string;
  name: string;
  kind: AccessListKind;
  location_id: string;
  /** `#code label` of its location. */
  location: string;
  /** Members whose status grants access now (included:*). */
  included: number;
  /** Every membership row kept, current or not. */
  members: number;
  /** Phone invites not yet applied, expired ones too. */
  invites: number;
};

export type ConsoleAccessListList = { data: ConsoleAccessListSummary[] };

/** A joined member as the public API shows it (the payment fields on paid lists only). */
export type ConsoleAccessListMember = {
  user_id: string;
  status: MembershipStatus;
  joined_at: string;
  expires_at: string;
  payment_period?: PaymentPeriod;
  recurring_payment?: boolean;
  next_payment_at?: string;
  comment: string;
  external_id: string;
};

/** A phone invite as stored: its status at `now` (invited, or excluded:expired), created and expiry. */
export type ConsoleAccessListInvite = {
  phone_number: string;
  status: MembershipStatus;
  created_at: string;
  expires_at: string;
  comment: string;
  external_id: string;
};

export type ConsoleAccessList = Omit<ConsoleAccessListSummary, "included" | "members" | "invites"> & {
  members: ConsoleAccessListMember[];
  invites: ConsoleAccessListInvite[];
  now: string;
};
