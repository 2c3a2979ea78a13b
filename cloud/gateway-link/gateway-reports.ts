import type { Logger } from "pino";
import type { DeviceStateReport, HardwareEvent, Heartbeat, Status } from "../../shared/wire/messages.ts";
import { advanceDevice, type SensorColumns } from "../commands/command-store.ts";
import type { CommandTimeoutConfig } from "../commands/timeouts.ts";
import type { Db } from "../store/db.ts";

type Tx = Pick<Db, "updateTable" | "selectFrom">;

/**
 * Heartbeats mark the gateway's GUARD and every bus device it reached as seen now. The cloud's clock,
 * not the gateway's, decides health, so a gateway with a wrong clock cannot look healthy (F14).
 */
export async function applyHeartbeat(db: Db, hb: Heartbeat, now: Date): Promise<void> {
  const ts = now.toISOString();
  const reachable = hb.devices.filter((d) => d.reachable).map((d) => d.device_id);
  await db
    .updateTable("devices")
    .set({ last_seen_at: ts, offline_at: null })
    .where("gateway_id", "=", hb.gateway_id)
    .where((eb) =>
      eb.or([eb("type", "=", "GUARD"), ...(reachable.length ? [eb("id", "in", reachable)] : [])]),
    )
    .execute();
}

/** The retained status and the Last Will: offline takes every device of the gateway down at once. */
export async function applyStatus(db: Db, st: Status, now: Date): Promise<void> {
  const ts = now.toISOString();
  await db.transaction().execute(async (trx) => {
    await trx
      .updateTable("gateways")
      .set({ online: st.online ? 1 : 0, status_at: ts })
      .where("id", "=", st.gateway_id)
      .execute();
    if (st.online) {
      await trx
        .updateTable("devices")
        .set({ last_seen_at: ts, offline_at: null })
        .where("gateway_id", "=", st.gateway_id)
        .where("type", "=", "GUARD")
        .execute();
    } else {
      await trx
        .updateTable("devices")
        .set({ offline_at: ts })
        .where("gateway_id", "=", st.gateway_id)
        .execute();
    }
  });
}

/**
 * Physical state observed by the gateway (ARCHITECTURE flow 6): written as the device's sensor columns;
 * a lock reading also reconciles `state` outside a command in flight, and a state it moves is recorded
 * with its cause (who and why, for a technician).
 */
export async function applyDeviceState(
  tx: Tx & Pick<Db, "insertInto">,
  gatewayId: string,
  msg: DeviceStateReport,
  deps: { now: Date; timeouts: CommandTimeoutConfig; log: Logger },
) {
  const { now, log } = deps;
  const owned = await tx
    .selectFrom("devices")
    .select("id")
    .where("id", "=", msg.device_id)
    .where("gateway_id", "=", gatewayId)
    .executeTakeFirst();
  if (!owned) {
    log.warn(
      { gateway_id: gatewayId, device_id: msg.device_id },
      "state for a device this gateway does not own",
    );
    return;
  }
  const ts = now.toISOString();
  const bit = (b: boolean | undefined) => (b === undefined ? {} : b ? 1 : 0);
  // Not `last_seen_at`: a report may come out of the outbox long after it was observed; health comes
  // from heartbeats alone.
  const sensors: SensorColumns = {
    sensors_at: ts,
    ...(msg.lock_state ? { lock_state: msg.lock_state } : {}),
    ...(msg.door_open !== undefined ? { door_open: bit(msg.door_open) as number } : {}),
    ...(msg.item_present !== undefined ? { item_present: bit(msg.item_present) as number } : {}),
    ...(msg.sleep_state !== undefined ? { sleep_state: msg.sleep_state } : {}),
  };
  if (!msg.lock_state) {
    await tx.updateTable("devices").set(sensors).where("id", "=", msg.device_id).execute();
    return;
  }
  const res = await advanceDevice(tx, {
    deviceId: msg.device_id,
    commandId: null,
    input: { kind: "sensed", lockState: msg.lock_state },
    now,
    cfg: deps.timeouts,
    sensors,
  });
  if (!res?.changed) return;
  log.info(
    { device_id: msg.device_id, from: res.from, to: res.row.state_value, cause: msg.cause },
    "device state follows the hardware",
  );
  await tx
    .insertInto("device_state_changes")
    .values({
      gateway_id: gatewayId,
      seq: msg.seq,
      device_id: msg.device_id,
      from_value: res.from,
      to_value: res.row.state_value,
      lock_state: msg.lock_state,
      cause: msg.cause,
      detail: msg.detail,
      observed_at: msg.observed_at,
      received_at: ts,
    })
    .execute();
}

/**
 * Keeps what the hardware reported on its own (site events: doors, jams, tamper) for the event and
 * webhook features. A device another gateway owns is recorded without the device (S30).
 */
export async function applyHardwareEvent(
  tx: Tx & Pick<Db, "insertInto">,
  gatewayId: string,
  msg: HardwareEvent,
  now: Date,
  log: Logger,
) {
  let deviceId = msg.device_id;
  if (deviceId) {
    const owned = await tx
      .selectFrom("devices")
      .select("id")
      .where("id", "=", deviceId)
      .where("gateway_id", "=", gatewayId)
      .executeTakeFirst();
    if (!owned) {
      log.warn(
        { gateway_id: gatewayId, device_id: deviceId },
        "event for a device this gateway does not own",
      );
      deviceId = null;
    }
  }
  await tx
    .insertInto("hardware_events")
    .values({
      gateway_id: gatewayId,
      seq: msg.seq,
      device_id: deviceId,
      source: msg.source,
      event: msg.event,
      detail: msg.detail,
      observed_at: msg.observed_at,
      received_at: now.toISOString(),
    })
    .execute();
}
