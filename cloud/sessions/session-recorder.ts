import { randomUUID } from "node:crypto";
import { AppError } from "../../shared/api/errors.ts";
import { isInterim } from "../../shared/domain/device-machine.ts";
import { familyOf } from "../../shared/domain/device-types.ts";
import type { SessionStatus } from "../../shared/domain/session-machine.ts";
import type { Principal } from "../auth/principal.ts";
import { parseLocationAttrs } from "../locations/location-attrs.ts";
import type { CommandRecord } from "../store/command-record.ts";
import type { Executor } from "../store/db.ts";
import type { DeviceRecord } from "../store/device-record.ts";
import { closeSession } from "./close-session.ts";
import { type SessionRow, sessionRepository } from "./session-repository.ts";

/**
 * Where sessions meet commands and devices (spec: Session status, Session events):
 *  - a rider's lock or book opens a session (pending), or a lock continues the rider's booking;
 *  - the command's SUCCESS records the event: book → book, lock → start, unlock → end;
 *  - a device that leaves its state with no command of the session behind it (sensors, a force command,
 *    an expired or cancelled booking) ends the session it held.
 */

const DEFAULT_BOOKING_MS = 60 * 60 * 1000;

const laterOf = (a: string, b: string) => (Date.parse(a) >= Date.parse(b) ? a : b);

type Whose = Pick<
  SessionRow,
  "operator_id" | "user_id" | "access_key_id" | "location_id" | "device_id" | "price_list_id" | "command_id"
>;

/** A new pending session: whose it is, where, what prices it and what moves it next; no event yet. */
function pendingSession(whose: Whose, now: Date): SessionRow {
  const ts = now.toISOString();
  const { operator_id, user_id, access_key_id, location_id, device_id, price_list_id, command_id } = whose;
  return {
    id: randomUUID(),
    operator_id,
    user_id,
    access_key_id,
    location_id,
    device_id,
    price_list_id,
    command_id,
    status: "pending",
    status_at: ts,
    booked_time: null,
    booked_until_time: null,
    start_time: null,
    end_time: null,
    ended_by: null,
    fee_currency: null,
    fee_value: null,
    created_at: ts,
    updated_at: ts,
  };
}

/** Sessions are a rider's, on a device that takes them: not a GUARD or door, nor a sessionless dock. */
export function takesSessions(device: Pick<DeviceRecord, "type">): boolean {
  return familyOf(device.type) === "locking" && device.type !== "DOCK_SESSIONLESS";
}

/**
 * max_user_sessions of the location (0: no cap; docs/decisions/sessions-and-billing.md): the rider's booked and active
 * sessions there, and pending ones whose lock or book is under way, count.
 */
async function checkMaxUserSessions(tx: Executor, principal: Principal, locationId: string): Promise<void> {
  const attrs = await sessionRepository(tx).locationAttrs(locationId);
  const max = attrs === undefined ? 0 : parseLocationAttrs(attrs).max_user_sessions;
  if (max < 1) return;
  const held = await sessionRepository(tx).countHeld(principal.operatorId, principal.id, locationId);
  if (held >= max)
    throw new AppError(
      "ERRORS.MAX_USER_SESSIONS_REACHED",
      `You already have ${held} session${held === 1 ? "" : "s"} at this location, the most it allows (max_user_sessions ${max}); end one first`,
      { max_user_sessions: max, location_id: locationId },
    );
}

/**
 * In the command POST's transaction, once the command is written: a lock or book with a rider's token
 * opens a pending session, or, for a lock, continues the rider's booked session on the device. An S2S
 * client's command opens none (spec: sessions only under external-user authentication). Throws
 * ERRORS.MAX_USER_SESSIONS_REACHED, rolling the command back, when the rider holds enough sessions there.
 */
export async function openSessionFor(
  tx: Executor,
  at: { principal: Principal; device: DeviceRecord; command: CommandRecord; now: Date },
): Promise<void> {
  const { principal, device, command, now } = at;
  if (principal.kind !== "user" || !takesSessions(device)) return;
  if (command.name !== "lock" && command.name !== "book") return;
  const sessions = sessionRepository(tx);
  if (command.name === "lock") {
    const booked = await sessions.bookedBy(principal.id, device.id);
    if (booked) return sessions.setCommand(booked.id, command.id, now);
  }
  await checkMaxUserSessions(tx, principal, device.location_id);
  const dormant = await sessions.dormantPending(principal.id, device.id, now);
  if (dormant) return sessions.setCommand(dormant.id, command.id, now);
  await sessions.insert(
    pendingSession(
      {
        operator_id: principal.operatorId,
        user_id: principal.id,
        access_key_id: null,
        location_id: device.location_id,
        device_id: device.id,
        price_list_id: device.attrs.price_list_id,
        command_id: command.id,
      },
      now,
    ),
  );
}

/**
 * Called where a command reaches SUCCESS (advanceCommand), in that transaction. Its events are dated when
 * the hardware did it (`happenedAt`, the report's fact time), never before the command was asked for: a
 * report that waited out a partition must not bill the rider for the wait.
 */
export async function onCommandSucceeded(
  tx: Executor,
  command: CommandRecord,
  now: Date,
  happenedAt = now.toISOString(),
): Promise<void> {
  const sessions = sessionRepository(tx);
  const ts = laterOf(happenedAt, command.created_at);
  switch (command.name) {
    case "book": {
      const s = await sessions.findByCommand(command.id);
      if (!s) return;
      const until =
        command.wire_request?.params.booking?.until ??
        (command.params.timeout_at
          ? new Date(command.params.timeout_at).toISOString()
          : new Date(now.getTime() + DEFAULT_BOOKING_MS).toISOString());
      await sessions.record(s.id, { name: "book", timestamp: ts, booked_until: until }, now);
      return;
    }
    case "lock": {
      const s = await sessions.findByCommand(command.id);
      if (!s || (await sessions.record(s.id, { name: "start", timestamp: ts }, now))) return;
      // The booking this lock continued ended while it travelled (cancelled, expired): the rider's bike is
      // in now all the same, so the lock starts a session of its own.
      if (s.status !== "ended") return;
      const fresh = pendingSession(s, now);
      await sessions.insert(fresh);
      await sessions.record(fresh.id, { name: "start", timestamp: ts }, now);
      return;
    }
    case "unlock":
    case "force-unlock":
      for (const s of await sessions.onDevice(command.device_id, ["active"]))
        await closeSession(tx, s, now, command.name, { at: ts });
      return;
    case "cancel-booking":
    case "force-cancel-booking":
      for (const s of await sessions.onDevice(command.device_id, ["booked"]))
        await closeSession(tx, s, now, "cancel-booking", { at: ts });
      return;
    default:
      return;
  }
}

/**
 * Called where the hardware reports a command done that the cloud had already ended (past its deadline,
 * superseded): an unlock that opened the latch all the same ends the sessions it found active, dated when
 * it did it. A reading in the report may be older than others already applied, so the sensors alone would
 * not end them.
 */
export async function onLateSuccess(
  tx: Executor,
  command: CommandRecord,
  now: Date,
  happenedAt = now.toISOString(),
): Promise<void> {
  if (command.name !== "unlock" && command.name !== "force-unlock") return;
  const ts = laterOf(happenedAt, command.created_at);
  for (const s of await sessionRepository(tx).onDevice(command.device_id, ["active"]))
    if (s.start_time !== null && Date.parse(s.start_time) <= Date.parse(command.created_at))
      await closeSession(tx, s, now, command.name, { at: ts });
}

/**
 * Called whenever a device's state changes (advanceDevice), in that transaction. A device settled
 * UNLOCKED (available) holds no session: an active one was ended by the hardware or a force command, a
 * booked one is over. A device settled LOCKED holds no booking any more. Interim states wait for their
 * command.
 */
export async function sessionsFollowDevice(
  tx: Executor,
  device: DeviceRecord,
  now: Date,
  happenedAt = now.toISOString(),
): Promise<void> {
  if (!takesSessions(device) || isInterim(device.state.value)) return;
  const ending: SessionStatus[] =
    device.state.value === "UNLOCKED"
      ? ["active", "booked"]
      : device.state.value === "LOCKED"
        ? ["booked"]
        : [];
  if (ending.length === 0) return;
  for (const s of await sessionRepository(tx).onDevice(device.id, ending))
    await closeSession(tx, s, now, s.status === "active" ? "hardware" : "booking-over", { at: happenedAt });
}

/**
 * Called where a device's latch is found open and its state does not move (a command holds it): the
 * session it held is over, dated when the latch was found open (the hardware is the truth).
 */
export async function sessionsFollowLatch(
  tx: Executor,
  device: DeviceRecord,
  now: Date,
  happenedAt = now.toISOString(),
): Promise<void> {
  if (!takesSessions(device)) return;
  for (const s of await sessionRepository(tx).onDevice(device.id, ["active"]))
    await closeSession(tx, s, now, "hardware", { at: happenedAt });
}

/**
 * Called where a report that found the latch open at `openedAt` comes after a later lock reading (out of
 * outbox order): the device keeps the later state, but a session active since before the opening ended
 * there. One that began after it (the later lock's) goes on.
 */
export async function sessionsOpenedAt(
  tx: Executor,
  device: DeviceRecord,
  now: Date,
  openedAt: string,
): Promise<void> {
  if (!takesSessions(device)) return;
  for (const s of await sessionRepository(tx).onDevice(device.id, ["active"]))
    if (s.start_time !== null && Date.parse(s.start_time) < Date.parse(openedAt))
      await closeSession(tx, s, now, "hardware", { at: openedAt });
}

/**
 * A locker or dock parked with an RFID card at an rfid_parking location (a tap the gateway decided): a
 * session identified only by the card, active from the tap, never charged (billing rule 2). It ends like
 * any active session, when the device is found unlocked.
 */
export async function openCardSession(
  tx: Executor,
  at: { device: DeviceRecord; cardId: string; startedAt: string; now: Date },
): Promise<void> {
  const { device, cardId, now } = at;
  if (!takesSessions(device)) return;
  const sessions = sessionRepository(tx);
  if ((await sessions.onDevice(device.id, ["active"])).length > 0) return;
  const card = pendingSession(
    {
      operator_id: device.operator_id,
      user_id: "",
      access_key_id: cardId,
      location_id: device.location_id,
      device_id: device.id,
      price_list_id: null,
      command_id: null,
    },
    now,
  );
  await sessions.insert(card);
  await sessions.record(card.id, { name: "start", timestamp: at.startedAt }, now);
}
