import { raiseStoredAlarm } from "../alarms/raise-alarm.ts";
import type { CommandRecord } from "../store/command-record.ts";
import type { Executor } from "../store/db.ts";
import { recordSiteEvent } from "../webhooks/site-events.ts";
import { subjectRepository } from "./subject-repository.ts";

/**
 * A command whose interim state ran past its deadline (spec: status webhook, "an interim state timed
 * out"), raised with its stored alarm in the transaction that ends it, so a crash between the two cannot
 * lose it.
 */
export async function raiseTimedOut(trx: Executor, ended: CommandRecord, now: Date): Promise<void> {
  const device = await subjectRepository(trx).device(ended.device_id);
  if (!device) return;
  const data = {
    event: "interim_state_timed_out",
    command_id: ended.id,
    command: ended.name,
    reason: ended.state.reason,
    alias: device.alias,
    device_type: device.type,
  };
  const place = { operatorId: device.operator_id, locationId: device.location_id, deviceId: ended.device_id };
  await recordSiteEvent(trx, { ...place, type: "status", data, at: now });
  await raiseStoredAlarm(trx, {
    ...place,
    subject: { kind: "device", id: ended.device_id },
    kind: "interim_state_timed_out",
    details: data,
    now,
  });
}
