import type { AlarmKind, AlarmSubject } from "../../shared/domain/alarm-kinds.ts";
import { factTime } from "../../shared/wire/fact-time.ts";
import type { HardwareEvent } from "../../shared/wire/messages.ts";
import { clearStoredAlarm, raiseStoredAlarm } from "../alarms/raise-alarm.ts";
import type { Executor } from "../store/db.ts";
import { recordSiteEvent } from "../webhooks/site-events.ts";
import { subjectRepository } from "./subject-repository.ts";

/** Which hardware reports operators hear of (spec: webhooks): alarms, and anomalous states that persist. */
const WEBHOOK_OF: Partial<Record<HardwareEvent["event"], "alarm" | "status">> = {
  tamper: "alarm",
  door_held_open: "status",
  jammed: "status",
};

/** The stored alarm each of those raises (docs/decisions/alarms.md). */
const ALARM_OF: Partial<Record<HardwareEvent["event"], AlarmKind>> = {
  tamper: "tamper",
  door_held_open: "door_held_open",
  jammed: "jammed",
};

/** Reports that end an alarm's cause: a door closed is no longer held open; a latch that moved is not jammed. */
const CLEARS: Partial<Record<HardwareEvent["event"], { kind: AlarmKind; note: string }>> = {
  door_closed: { kind: "door_held_open", note: "door closed" },
  latch_locked: { kind: "jammed", note: "latch locked" },
  latch_unlocked: { kind: "jammed", note: "latch unlocked" },
};

/**
 * In the transaction that keeps a gateway's hardware event: the site event it raises with its stored
 * alarm, or the alarm it clears, if any.
 */
export async function raiseHardwareAlarm(
  tx: Executor,
  e: { gatewayId: string; deviceId: string | null; msg: HardwareEvent; now: Date },
): Promise<void> {
  // A report about no device (a board's) is the gateway's.
  const subject: AlarmSubject = e.deviceId
    ? { kind: "device", id: e.deviceId }
    : { kind: "gateway", id: e.gatewayId };
  const clears = CLEARS[e.msg.event];
  if (clears) await clearStoredAlarm(tx, { ...clears, subject, now: e.now });
  const type = WEBHOOK_OF[e.msg.event];
  if (!type) return;
  const subjects = subjectRepository(tx);
  const gw = await subjects.gatewayPlace(e.gatewayId);
  if (!gw) return;
  const device = e.deviceId ? await subjects.device(e.deviceId) : undefined;
  const data = {
    event: e.msg.event,
    source: e.msg.source,
    observed_at: e.msg.observed_at,
    ...(device ? { alias: device.alias, device_type: device.type } : {}),
  };
  const place = { operatorId: gw.operator_id, locationId: gw.location_id, deviceId: e.deviceId };
  // On the cloud's clock; the gateway's own observed_at travels in `data`.
  const at = new Date(factTime(e.msg, e.now));
  await recordSiteEvent(tx, { ...place, type, data, at }, e.now);
  const kind = ALARM_OF[e.msg.event];
  if (kind) await raiseStoredAlarm(tx, { ...place, subject, kind, details: data, now: e.now });
}
