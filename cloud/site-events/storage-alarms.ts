import type { Heartbeat } from "../../shared/wire/messages.ts";
import { clearStoredAlarm, raiseStoredAlarm } from "../alarms/raise-alarm.ts";
import type { Db } from "../store/db.ts";
import { subjectRepository } from "./subject-repository.ts";

/**
 * A gateway's state store full, as its heartbeat tells it (the store cannot journal an event then): its
 * `storage_full` alarm, raised while full and cleared once it has room again.
 */
export async function storageAlarm(
  db: Db,
  gatewayId: string,
  storage: NonNullable<Heartbeat["storage"]>,
  now: Date,
): Promise<void> {
  const subject = { kind: "gateway", id: gatewayId } as const;
  await db.transaction().execute(async (trx) => {
    if (!storage.full)
      return clearStoredAlarm(trx, { kind: "storage_full", subject, note: "the store has room again", now });
    const gw = await subjectRepository(trx).gatewayPlace(gatewayId);
    if (!gw) return;
    await raiseStoredAlarm(trx, {
      operatorId: gw.operator_id,
      locationId: gw.location_id,
      deviceId: null,
      subject,
      kind: "storage_full",
      details: { free_bytes: storage.free_bytes },
      now,
    });
  });
}
