import { subjectKey } from "../../shared/domain/alarm-kinds.ts";
import { alarmRepository } from "../alarms/alarm-repository.ts";
import { clearStoredAlarm, raiseStoredAlarm } from "../alarms/raise-alarm.ts";
import type { Db, Executor } from "../store/db.ts";

/**
 * The stored alarms of the connection watch, in the transaction of the change it claimed: a device gone
 * offline raises `connection_lost`; back online, it clears that and its location's `connection_confirmed`
 * (a location is offline only while none of its devices is online).
 */
export async function connectionAlarm(
  trx: Executor,
  d: { operatorId: string; locationId: string; deviceId: string; online: boolean },
  details: Record<string, unknown>,
  now: Date,
): Promise<void> {
  const subject = { kind: "device", id: d.deviceId } as const;
  if (!d.online) {
    const { operatorId, locationId, deviceId } = d;
    await raiseStoredAlarm(trx, {
      operatorId,
      locationId,
      deviceId,
      subject,
      kind: "connection_lost",
      details,
      now,
    });
    return;
  }
  await clearStoredAlarm(trx, { kind: "connection_lost", subject, note: "device back online", now });
  await clearStoredAlarm(trx, {
    kind: "connection_confirmed",
    subject: { kind: "location", id: d.locationId },
    note: "a device of the location back online",
    now,
  });
}

/** A location's outage confirmed: its `connection_confirmed` alarm, in the transaction that confirms it. */
export function outageAlarm(
  trx: Executor,
  o: { operatorId: string; locationId: string },
  details: Record<string, unknown>,
  now: Date,
): Promise<void> {
  return raiseStoredAlarm(trx, {
    ...o,
    deviceId: null,
    subject: { kind: "location", id: o.locationId },
    kind: "connection_confirmed",
    details,
    now,
  });
}

/**
 * Devices the watch sees for the first time notify nothing, but one first seen online ends its location's
 * outage all the same (a device installed at a dark location): its `connection_confirmed` alarm clears.
 * Only the few locations with such an alarm open are looked at.
 */
export async function firstSightAlarms(
  db: Db,
  sights: readonly { locationId: string; online: boolean }[],
  now: Date,
): Promise<void> {
  const back = new Set(sights.filter((s) => s.online).map((s) => s.locationId));
  // Most rounds see no device for the first time.
  if (back.size === 0) return;
  const open = new Set(await alarmRepository(db).openSubjects("connection_confirmed"));
  for (const id of back) {
    const subject = { kind: "location", id } as const;
    if (!open.has(subjectKey(subject))) continue;
    await db.transaction().execute((trx) =>
      clearStoredAlarm(trx, {
        kind: "connection_confirmed",
        subject,
        note: "a device of the location first seen online",
        now,
      }),
    );
  }
}
