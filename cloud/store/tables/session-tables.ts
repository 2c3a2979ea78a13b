import type { PaymentStatus } from "../../../shared/domain/payment-machine.ts";
import type { SessionEventName, SessionStatus } from "../../../shared/domain/session-machine.ts";

/** Store tables of sessions, payments and price lists (see cloud/store/schema.ts for the conventions). */

/** A price list of an operator, declared in the site manifest (cloud/sessions/billing.ts: PriceTerms). */
export interface PriceListsTable {
  id: string;
  operator_id: string;
  /** The manifest's name for it, unique per operator */
  code: string;
  name: string;
  currency: string;
  free_minutes: number;
  period_minutes: number;
  /** Decimal text in the currency's units */
  price_per_period: string;
  max_fee: string | null;
  created_at: string;
  updated_at: string;
}

/**
 * One device interaction of an external user. `status` and the four times are what the session's events
 * fold to (shared/domain/session-machine.ts), written in the same transaction as each event so that lists
 * can filter and count on them.
 */
export interface SessionsTable {
  id: string;
  operator_id: string;
  /** service_user_id of the rider; "" for a session identified only by an RFID card */
  user_id: string;
  /** The RFID card of an rfid_parking session (spec: access_key_id); null for a rider's */
  access_key_id: string | null;
  location_id: string;
  device_id: string;
  /** The device's price list when the session was created; null if it had none */
  price_list_id: string | null;
  status: SessionStatus;
  /** Time of the event that gave the status (creation for pending): what from/to filter on */
  status_at: string;
  booked_time: string | null;
  booked_until_time: string | null;
  start_time: string | null;
  end_time: string | null;
  /** The lock or book command that moves the session next; its SUCCESS records the event */
  command_id: string | null;
  /** Why it ended: unlock, force-unlock, hardware, operator, cancel-booking, booking-over */
  ended_by: string | null;
  fee_currency: string | null;
  fee_value: string | null;
  /** Immutable: the pagination key with id */
  created_at: string;
  updated_at: string;
}

/** Immutable: inserted once, never updated or deleted. */
export interface SessionEventsTable {
  session_id: string;
  /** 1, 2, 3 in the order recorded */
  seq: number;
  name: SessionEventName;
  occurred_at: string;
  /** book only: the booking's expiry */
  booked_until: string | null;
}

export interface PaymentsTable {
  id: string;
  operator_id: string;
  session_id: string;
  /** Name of the payment provider handling it (cloud/sessions/payment-provider.ts) */
  provider: string;
  status: PaymentStatus;
  created_at: string;
  updated_at: string;
}

/** Every status a payment went through, and who moved it. Immutable. */
export interface PaymentChangesTable {
  payment_id: string;
  seq: number;
  from_status: PaymentStatus | null;
  to_status: PaymentStatus;
  /** "session-end", "operator", or the provider's name */
  actor: string;
  changed_at: string;
}

export interface SessionTables {
  price_lists: PriceListsTable;
  sessions: SessionsTable;
  session_events: SessionEventsTable;
  payments: PaymentsTable;
  payment_changes: PaymentChangesTable;
}
