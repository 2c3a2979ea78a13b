import type { HardwareEvent } from "../../shared/wire/messages.ts";
import type { Executor } from "../store/db.ts";
import { recordSiteEvent } from "../webhooks/site-events.ts";
import { subjectRepository } from "./subject-repository.ts";

/** Which hardware reports operators hear of (spec: webhooks): alarms, and anomalous states that persist. */
const WEBHOOK_OF: Partial<Record<HardwareEvent["event"], "alarm" | "status">> = {
  tamper: "alarm",
  door_held_open: "status",
  jammed: "status",
};

/** In the transaction that keeps a gateway's hardware event: the site event it raises, if any. */
export async function raiseHardwareAlarm(
  tx: Executor,
  e: { gatewayId: string; deviceId: string | null; msg: HardwareEvent; now: Date },
): Promise<void> {
  const type = WEBHOOK_OF[e.msg.event];
  if (!type) return;
  const subjects = subjectRepository(tx);
  const gw = await subjects.gatewayPlace(e.gatewayId);
  if (!gw) return;
  const device = e.deviceId ? await subjects.device(e.deviceId) : undefined;
  await recordSiteEvent(
    tx,
    {
      operatorId: gw.operator_id,
      type,
      locationId: gw.location_id,
      deviceId: e.deviceId,
      data: {
        event: e.msg.event,
        source: e.msg.source,
        observed_at: e.msg.observed_at,
        ...(device ? { alias: device.alias, device_type: device.type } : {}),
      },
      at: new Date(e.msg.observed_at),
    },
    e.now,
  );
}
