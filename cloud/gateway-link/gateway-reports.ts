import type { Logger } from "pino";
import { factTime } from "../../shared/wire/fact-time.ts";
import type { DeviceStateReport, HardwareEvent, Status } from "../../shared/wire/messages.ts";
import { advanceDevice, recordReadingInOrder } from "../devices/advance-device.ts";
import { deviceRepository, type SensorReading } from "../devices/device-repository.ts";
import { readingSource } from "../devices/reading-order.ts";
import type { CommandTimeoutConfig } from "../devices/timeouts.ts";
import type { GatewayRefusal } from "../metrics.ts";
import { raiseHardwareAlarm } from "../site-events/hardware-alarms.ts";
import type { Db, Executor } from "../store/db.ts";
import { gatewayRepository } from "./gateway-repository.ts";
import { hardwareReportRepository } from "./hardware-report-repository.ts";

/** One message from a gateway's outbox, with what applying it needs. */
export type GatewayReport<M> = {
  gatewayId: string;
  msg: M;
  cfg: CommandTimeoutConfig;
  now: Date;
  log: Logger;
  /** Told why the message was refused in whole or part (S30), to be counted once it has committed. */
  refuse?: (reason: GatewayRefusal) => void;
};

/**
 * The retained status and the Last Will: offline takes every device of the gateway down at once, unless it
 * is the Will of a session older than the one announced online since (false: ignored as stale).
 */
export function applyStatus(db: Db, st: Status, now: Date): Promise<boolean> {
  const ts = now.toISOString();
  return db.transaction().execute(async (trx) => {
    const gateways = gatewayRepository(trx);
    const devices = deviceRepository(trx);
    if (st.online) {
      await gateways.setOnline(st.gateway_id, ts, st.sync ?? null);
      await devices.markGuardSeen(st.gateway_id, ts);
      return true;
    }
    if (!(await gateways.setOffline(st.gateway_id, ts, st.sync))) return false;
    await devices.markOffline(st.gateway_id, ts);
    return true;
  });
}

/** What a device_state report says of the sensors, stamped with when the cloud applied it. */
export function sensorReadingOf(msg: DeviceStateReport, ts: string): SensorReading {
  return {
    sensors_at: ts,
    ...(msg.lock_state ? { lock_state: msg.lock_state } : {}),
    ...(msg.door_open !== undefined ? { door_open: msg.door_open } : {}),
    ...(msg.item_present !== undefined ? { item_present: msg.item_present } : {}),
    ...(msg.sleep_state !== undefined ? { sleep_state: msg.sleep_state } : {}),
  };
}

/**
 * Physical state observed by the gateway (ARCHITECTURE flow 6): written as the device's sensor columns;
 * a lock reading also reconciles `state` outside a command in flight, and a state it moves is recorded
 * with its cause (who and why, for a technician).
 */
export async function applyDeviceState(
  tx: Executor,
  { gatewayId, msg, cfg, now, log, refuse }: GatewayReport<DeviceStateReport>,
): Promise<void> {
  const devices = deviceRepository(tx);
  if (!(await devices.isDrivenBy(gatewayId, msg.device_id))) {
    log.warn(
      { gateway_id: gatewayId, device_id: msg.device_id },
      "state for a device this gateway does not own: dropped",
    );
    refuse?.("foreign_device");
    return;
  }
  const ts = now.toISOString();
  // Not `last_seen_at`: a report may come out of the outbox long after it was observed; health comes
  // from heartbeats alone.
  const sensors = sensorReadingOf(msg, ts);
  // Another replica may have applied a later report of this gateway already: older fields give way.
  const reading = { source: readingSource(gatewayId, msg.outbox_id), seq: msg.seq };
  if (!msg.lock_state) {
    await recordReadingInOrder(tx, msg.device_id, sensors, reading);
    return;
  }
  const res = await advanceDevice(tx, {
    deviceId: msg.device_id,
    commandId: null,
    // A tap releases a door for the gateway's window: it shows when it re-locks, as after an unlock command.
    input: { kind: "sensed", lockState: msg.lock_state, doorReleased: msg.cause === "tap" },
    now,
    happenedAt: factTime(msg, now),
    cfg,
    sensors,
    reading,
  });
  if (!res?.changed) return;
  const to = res.device.state.value;
  log.info(
    { device_id: msg.device_id, from: res.from, to, cause: msg.cause },
    "device state follows the hardware",
  );
  await hardwareReportRepository(tx).recordStateChange({
    gateway_id: gatewayId,
    outbox_id: msg.outbox_id ?? "",
    seq: msg.seq,
    device_id: msg.device_id,
    from_value: res.from,
    to_value: to,
    lock_state: msg.lock_state,
    cause: msg.cause,
    detail: msg.detail,
    observed_at: msg.observed_at,
    received_at: ts,
  });
}

/**
 * Keeps what the hardware reported on its own (site events: doors, jams, tamper) for the event and
 * webhook features. A device another gateway owns is recorded without the device (S30).
 */
export async function applyHardwareEvent(
  tx: Executor,
  { gatewayId, msg, now, log, refuse }: GatewayReport<HardwareEvent>,
): Promise<void> {
  let deviceId = msg.device_id;
  if (deviceId && !(await deviceRepository(tx).isDrivenBy(gatewayId, deviceId))) {
    log.warn({ gateway_id: gatewayId, device_id: deviceId }, "event for a device this gateway does not own");
    refuse?.("foreign_device");
    deviceId = null;
  }
  await hardwareReportRepository(tx).recordEvent({
    gateway_id: gatewayId,
    outbox_id: msg.outbox_id ?? "",
    seq: msg.seq,
    device_id: deviceId,
    source: msg.source,
    event: msg.event,
    detail: msg.detail,
    observed_at: msg.observed_at,
    received_at: now.toISOString(),
  });
  await raiseHardwareAlarm(tx, { gatewayId, deviceId, msg, now });
}
