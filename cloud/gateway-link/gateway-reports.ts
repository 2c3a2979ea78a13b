import type { Logger } from "pino";
import type { DeviceStateReport, HardwareEvent, Heartbeat, Status } from "../../shared/wire/messages.ts";
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

/** Physical state observed by the gateway; the API state machine is moved only by commands. */
export async function applyDeviceState(
  tx: Tx,
  gatewayId: string,
  msg: DeviceStateReport,
  now: Date,
  log: Logger,
) {
  const set = {
    ...(msg.lock_state ? { lock_state: msg.lock_state } : {}),
    ...(msg.sleep_state !== undefined ? { sleep_state: msg.sleep_state } : {}),
    last_seen_at: now.toISOString(),
  };
  const res = await tx
    .updateTable("devices")
    .set(set)
    .where("id", "=", msg.device_id)
    .where("gateway_id", "=", gatewayId)
    .executeTakeFirst();
  if (res.numUpdatedRows === 0n)
    log.warn(
      { gateway_id: gatewayId, device_id: msg.device_id },
      "state for a device this gateway does not own",
    );
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
