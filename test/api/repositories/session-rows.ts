import type { SessionRow } from "../../../cloud/sessions/session-repository.ts";
import { fx, OP_A } from "../../support/fixture-site.ts";

/** A session row of the fixture site (operator A, locker 2 of L1 unless told otherwise). */
export function sessionRow(id: string, over: Partial<SessionRow> = {}): SessionRow {
  const at = over.created_at ?? "2026-01-15T10:00:00.000Z";
  return {
    id,
    operator_id: OP_A,
    user_id: "rider-1",
    access_key_id: null,
    location_id: fx.location("L1"),
    device_id: fx.device("L1", "2"),
    price_list_id: null,
    status: "active",
    status_at: at,
    booked_time: null,
    booked_until_time: null,
    start_time: at,
    end_time: null,
    command_id: null,
    ended_by: null,
    fee_currency: null,
    fee_value: null,
    created_at: at,
    updated_at: at,
    ...over,
  };
}
