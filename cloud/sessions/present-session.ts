import type { ConsoleSession } from "../../shared/api/console-sessions.ts";
import type { Payment, SessionV1, SessionV2 } from "../../shared/api/session.ts";
import { deviceUri, locationUri } from "../../shared/api/uris.ts";
import { deriveSession, type SessionEvent } from "../../shared/domain/session-machine.ts";
import type { PaymentRow } from "./payment-repository.ts";
import { paymentUri } from "./payments.ts";
import type { SessionRow } from "./session-repository.ts";

export const sessionV1Uri = (id: string) => `/session/v1/device-sessions/${id}`;
/** A card's session has no user to address it under: its uri is the record by id alone (v1). */
export const sessionV2Uri = (userId: string, id: string) =>
  userId === "" ? sessionV1Uri(id) : `/session/v2/users/${userId}/sessions/${id}`;

/** A session with what its record shows besides its row: its events and its payment (once ended). */
export type SessionParts = {
  row: SessionRow;
  events: SessionEvent[];
  payment: Pick<PaymentRow, "id" | "status"> | null;
};

function feeOf(row: SessionRow) {
  return row.fee_currency !== null && row.fee_value !== null
    ? { currency: row.fee_currency, value: row.fee_value }
    : null;
}

const eventsOut = (events: SessionEvent[]) => events.map((e) => ({ name: e.name, timestamp: e.timestamp }));

/** The v2 record. Status and times are what the events fold to, not what a column says. */
export function presentSessionV2({ row, events, payment }: SessionParts): SessionV2 {
  const view = deriveSession(events);
  return {
    id: row.id,
    uri: sessionV2Uri(row.user_id, row.id),
    user_id: row.user_id,
    access_key_id: row.access_key_id,
    status: view.status,
    booked_time: view.booked_time,
    booked_until_time: view.booked_until_time,
    start_time: view.start_time,
    end_time: view.end_time,
    fee: feeOf(row),
    payment: payment ? { id: payment.id, status: payment.status } : null,
    rating: null,
    storage: {
      location: { id: row.location_id, uri: locationUri(row.location_id) },
      device: { id: row.device_id, uri: deviceUri(row.device_id) },
    },
    // A parking session has no rental metadata.
    travel: null,
    auxiliary_devices: [],
    events: eventsOut(events),
  };
}

/** The deprecated v1 record: start is the lock, end the unlock; no status, no id but in its uri. */
export function presentSessionV1({ row, events, payment }: SessionParts): SessionV1 {
  const view = deriveSession(events);
  return {
    access_key_id: row.access_key_id,
    user_id: row.user_id,
    start_time: view.start_time,
    end_time: view.end_time,
    fee: feeOf(row),
    rating: null,
    location: { id: row.location_id, uri: locationUri(row.location_id) },
    device: { id: row.device_id, uri: deviceUri(row.device_id) },
    payment: payment ? { id: payment.id, uri: paymentUri(payment.id), status: payment.status } : null,
    events: eventsOut(events),
    uri: sessionV1Uri(row.id),
  };
}

export function presentPayment(payment: PaymentRow, row: SessionRow): Payment {
  return {
    id: payment.id,
    uri: paymentUri(payment.id),
    status: payment.status,
    fee: feeOf(row),
    session: { id: row.id, uri: sessionV2Uri(row.user_id, row.id) },
  };
}

/** The console's record: the v2 record and where the session is. */
export function presentConsoleSession(parts: SessionParts): ConsoleSession {
  return { ...presentSessionV2(parts), device_id: parts.row.device_id, location_id: parts.row.location_id };
}
