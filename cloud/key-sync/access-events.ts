import type { Logger } from "pino";
import { maskCardId } from "../../shared/domain/card-id.ts";
import { factTime } from "../../shared/wire/fact-time.ts";
import type { AccessDecision } from "../../shared/wire/messages.ts";
import { deviceRepository } from "../devices/device-repository.ts";
import { openedLater, readingSource, setLater } from "../devices/reading-order.ts";
import { openCardSession } from "../sessions/session-recorder.ts";
import type { Executor } from "../store/db.ts";
import { accessEventRepository } from "./access-event-repository.ts";

/**
 * Keeps a tap as the gateway decided it (ARCHITECTURE flow 2), in the transaction that applies the outbox
 * message. The device's state follows from the gateway's own `device_state` reports, not from this. A tap
 * naming a device this gateway does not drive — another gateway's, perhaps another operator's — is kept
 * without the device, as a hardware event is (S30): the gateway's reader did read the card, but nothing
 * of it may land on a device it does not drive (no session, no history).
 */
export async function applyAccessDecision(
  trx: Executor,
  o: {
    gatewayId: string;
    msg: AccessDecision;
    now: Date;
    log: Logger;
    refuse?: (reason: "foreign_device") => void;
  },
): Promise<void> {
  const { gatewayId, msg } = o;
  const events = accessEventRepository(trx);
  const gw = await events.placeOf(gatewayId);
  if (!gw) return;
  let deviceId = msg.device_id;
  if (deviceId && !(await deviceRepository(trx).isDrivenBy(gatewayId, deviceId))) {
    o.log.warn({ gateway_id: gatewayId, device_id: deviceId }, "tap for a device this gateway does not own");
    o.refuse?.("foreign_device");
    deviceId = null;
  }
  await events.record({
    gateway_id: gatewayId,
    outbox_id: msg.outbox_id ?? "",
    seq: msg.seq,
    operator_id: gw.operator_id,
    location_id: gw.location_id,
    device_id: deviceId,
    reader: msg.reader,
    card_id: msg.card_id,
    granted: msg.granted ? 1 : 0,
    action: msg.action,
    reason: msg.reason,
    whitelist_id: msg.whitelist_id,
    decided_by: msg.decided_by,
    actuated: msg.actuated === null ? null : msg.actuated ? 1 : 0,
    observed_at: msg.observed_at,
    received_at: o.now.toISOString(),
  });
  // An rfid_parking lock the hardware did: the card's session (the unlock ends it through the sensors).
  if (msg.granted && msg.actuated && msg.action === "lock" && msg.reason === "parked" && deviceId) {
    const device = await deviceRepository(trx).find(deviceId);
    // Applied after a later report of this gateway found the latch open (a device report goes ahead of
    // the gateway's other messages; replicas apply in any order), even one a later lock has overtaken
    // since: in outbox order the session ended there, so it is not opened now.
    const at = { source: readingSource(gatewayId, msg.outbox_id), seq: msg.seq };
    const over =
      !!device &&
      (openedLater(device.sensor_marks, at) ||
        (device.lock_state === "UNLOCKED" && setLater(device.sensor_marks, at, "lock_state")));
    if (device && device.gateway_id === gatewayId && !over)
      await openCardSession(trx, {
        device,
        cardId: msg.card_id,
        startedAt: factTime(msg, o.now),
        now: o.now,
      });
  }
  o.log.info(
    {
      gateway_id: gatewayId,
      device_id: deviceId,
      card: maskCardId(msg.card_id),
      granted: msg.granted,
      reason: msg.reason,
    },
    "tap decided at the edge",
  );
}
