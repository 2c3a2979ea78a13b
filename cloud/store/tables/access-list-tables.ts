import type { AccessListKind, PaymentPeriod } from "../../../shared/domain/membership.ts";

/** Store tables of access lists and their members (see cloud/store/schema.ts for the conventions). */

/** An access list of a location, declared in the site manifest. */
export interface AccessListsTable {
  id: string;
  operator_id: string;
  location_id: string;
  kind: AccessListKind;
  name: string;
  /** Set when the manifest no longer declares the list: kept with its members, no longer enforced. */
  retired_at: string | null;
  created_at: string;
  updated_at: string;
}

/** A user's membership of a list (shared/domain/membership.ts derives its status). */
export interface AccessListMembersTable {
  access_list_id: string;
  /** service_user_id of an external user of the list's operator */
  user_id: string;
  operator_id: string;
  joined_at: string;
  payment_period: PaymentPeriod | null;
  /** 0/1; null on closed and password lists */
  recurring_payment: number | null;
  period_anchor: string | null;
  ends_at: string | null;
  end_reason: "expired" | "removed" | null;
  comment: string;
  external_id: string | null;
  updated_at: string;
}

/** A phone invite waiting for its person's sign-in. */
export interface AccessListInvitesTable {
  access_list_id: string;
  /** E.164 */
  phone_number: string;
  operator_id: string;
  payment_period: PaymentPeriod | null;
  recurring_payment: number | null;
  comment: string;
  external_id: string | null;
  created_at: string;
  expires_at: string;
}

export interface AccessListTables {
  access_lists: AccessListsTable;
  access_list_members: AccessListMembersTable;
  access_list_invites: AccessListInvitesTable;
}
