import type { TimelineEntry } from "../../shared/api/console-devices.ts";
import { AppError } from "../../shared/api/errors.ts";
import { listAudit } from "../audit/audit-log.ts";
import type { Principal } from "../auth/principal.ts";
import { hardwareReportRepository } from "../gateway-link/hardware-report-repository.ts";
import { accessEventRepository } from "../key-sync/access-event-repository.ts";
import { staffRepository } from "../staff/staff-repository.ts";
import type { Db } from "../store/db.ts";
import { deviceTimelineRepository } from "./device-timeline-repository.ts";

/** How many of each kind the page shows: the latest, enough for a ticket, small enough for a phone. */
const PER_KIND = 50;

/**
 * One timeline of a device, newest first: its commands with their events, the state changes its gateway
 * reported (cause and detail), who forced or synced it and why (the audit log), its sessions and the
 * access decisions at its readers. `principal` must see the device (the caller checked it).
 */
export async function deviceTimeline(
  db: Db,
  principal: Principal,
  deviceId: string,
): Promise<TimelineEntry[]> {
  const operatorId = principal.operatorId;
  const repo = deviceTimelineRepository(db);
  const [commands, changes, audit, sessions, taps] = await Promise.all([
    repo.commandsOf(operatorId, deviceId, PER_KIND),
    hardwareReportRepository(db).stateChangesOf(deviceId),
    listAudit(db, operatorId, { subject: { type: "device", id: deviceId }, limit: PER_KIND }),
    repo.sessionsOf(operatorId, deviceId, PER_KIND),
    accessEventRepository(db).atDevice(deviceId),
  ]);
  const emails = await staffEmails(db, audit.data);
  const entries: TimelineEntry[] = [
    ...commands.map((c) => ({
      kind: "command" as const,
      at: c.created_at,
      id: c.id,
      name: c.name,
      state: { value: c.state_value, reason: c.state_reason },
      requested_by: c.requested_by,
      reason: c.params.reason ?? null,
      comment: c.params.comment ?? null,
      events: c.events,
    })),
    ...changes.slice(-PER_KIND).map((s) => ({
      kind: "state_change" as const,
      at: s.observed_at,
      from: s.from_value,
      to: s.to_value,
      lock_state: s.lock_state,
      cause: s.cause,
      detail: s.detail,
    })),
    ...audit.data.map((a) => ({
      kind: "audit" as const,
      at: a.at,
      actor: { ...a.actor, ...(emails.has(a.actor.id) ? { email: emails.get(a.actor.id) } : {}) },
      action: a.action,
      reason: a.reason,
      comment: a.comment,
    })),
    ...sessions.map((s) => ({
      kind: "session" as const,
      at: s.created_at,
      id: s.id,
      status: s.status,
      user_id: s.user_id,
      access_key_id: s.access_key_id,
      start_time: s.start_time,
      end_time: s.end_time,
      ended_by: s.ended_by,
    })),
    ...taps
      .filter((t) => t.operator_id === operatorId)
      .slice(-PER_KIND)
      .map((t) => ({
        kind: "access" as const,
        at: t.observed_at,
        card_id: t.card_id,
        reader: t.reader,
        granted: t.granted === 1,
        action: t.action,
        reason: t.reason,
        decided_by: t.decided_by,
      })),
  ];
  return entries.sort((a, b) => (a.at < b.at ? 1 : a.at > b.at ? -1 : 0));
}

/** The emails of the staff members among `entries`' actors (the log keeps only their ids). */
async function staffEmails(db: Db, entries: { actor: { kind: string; id: string } }[]) {
  const ids = new Set(entries.filter((e) => e.actor.kind === "staff").map((e) => e.actor.id));
  const staff = staffRepository(db);
  const found = await Promise.all([...ids].map((id) => staff.find(id)));
  return new Map(found.flatMap((s) => (s ? [[s.id, s.email] as const] : [])));
}

/** The operator whose data a staff member's request is about: its own, or for a superadmin the owner's. */
export async function operatorFor(
  db: Db,
  own: string | null,
  subject: { device: string } | { command: string },
): Promise<string> {
  if (own !== null) return own;
  const repo = deviceTimelineRepository(db);
  const found =
    "device" in subject
      ? await repo.operatorOfDevice(subject.device)
      : await repo.operatorOfCommand(subject.command);
  if (found === undefined) {
    const [what, id] = "device" in subject ? ["Device", subject.device] : ["Command", subject.command];
    throw new AppError("ERRORS.NOT_FOUND", `${what} ${id} not found`);
  }
  return found;
}
