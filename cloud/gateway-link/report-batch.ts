import { sql } from "kysely";
import type { Logger } from "pino";
import { factTime } from "../../shared/wire/fact-time.ts";
import type { DeviceStateReport } from "../../shared/wire/messages.ts";
import { stepDevice } from "../devices/advance-device.ts";
import { deviceRepository, writeLockedDevices } from "../devices/device-repository.ts";
import { freshReading, readingSource } from "../devices/reading-order.ts";
import type { CommandTimeoutConfig } from "../devices/timeouts.ts";
import { sessionsFollowDevice, sessionsFollowLatch } from "../sessions/session-recorder.ts";
import type { Db } from "../store/db.ts";
import type { DeviceRecord } from "../store/device-record.ts";
import { sensorReadingOf } from "./gateway-reports.ts";
import { hardwareReportRepository } from "./hardware-report-repository.ts";

/** A device report of one gateway, as the batch takes it (`outbox_id`: "" when the message names none). */
export type QueuedReport = { gatewayId: string; msg: DeviceStateReport; now: Date };
/** What became of a report: applied, a duplicate of one applied before, or refused (S30). */
export type ReportOutcome = "applied" | "duplicate" | "foreign_device";

/**
 * Applies many gateways' device reports in one transaction of five statements whatever their number
 * (PostgreSQL): their dedup rows at once; their devices read and locked in id order; each report stepped
 * through the device machine in memory, in its gateway's order; every device written in one statement
 * (so each location's `data_version` rises once); the few state changes recorded. Same outcome as
 * `applyUpMessage` on each in turn (gateway-reports.ts `applyDeviceState`), one WAL flush for all.
 *
 * Lock order: devices (ascending id, before anything else), then their locations (the devices' trigger,
 * in ascending id since migration 028), then sessions. A command writes its one device, then its
 * location: it can wait for the batch, or the batch for it, never both (docs/decisions/fleet-intake.md).
 */
export function applyReportBatch(
  db: Db,
  reports: readonly QueuedReport[],
  deps: { timeouts: CommandTimeoutConfig; log: Logger },
): Promise<ReportOutcome[]> {
  return db.transaction().execute(async (trx) => {
    const outcomes: ReportOutcome[] = reports.map(() => "duplicate");
    const fresh = await markApplied(trx, reports);
    const devices = deviceRepository(trx);
    const ids = [...new Set(fresh.map((i) => (reports[i] as QueuedReport).msg.device_id))].sort();
    const held = new Map((await devices.lockInIdOrder(ids)).map((d) => [d.id, d]));
    const written = new Map<string, DeviceRecord>();
    const changed: { report: QueuedReport; from: DeviceRecord; to: DeviceRecord }[] = [];
    const opened: { report: QueuedReport; to: DeviceRecord }[] = [];
    for (const i of fresh) {
      const report = reports[i] as QueuedReport;
      const device = written.get(report.msg.device_id) ?? held.get(report.msg.device_id);
      if (!device || device.gateway_id !== report.gatewayId) {
        deps.log.warn(
          { gateway_id: report.gatewayId, device_id: report.msg.device_id },
          "state for a device this gateway does not own: dropped",
        );
        outcomes[i] = "foreign_device";
        continue;
      }
      outcomes[i] = "applied";
      const next = step(device, report, deps.timeouts);
      if (!next) continue;
      written.set(device.id, next.device);
      if (next.changed) changed.push({ report, from: device, to: next.device });
      else if (next.latchOpened) opened.push({ report, to: next.device });
    }
    await writeLockedDevices(trx, [...written.values()]);
    for (const c of changed) await recordChange(trx, c, deps.log);
    for (const { report: r, to } of opened) await sessionsFollowLatch(trx, to, r.now, factTime(r.msg, r.now));
    return outcomes;
  });
}

/** The indexes of the reports not applied before (their dedup rows are new), in the order given. */
async function markApplied(db: Db, reports: readonly QueuedReport[]): Promise<number[]> {
  const rows = reports.map((r) => ({
    gateway_id: r.gatewayId,
    outbox_id: r.msg.outbox_id ?? "",
    seq: r.msg.seq,
    applied_at: r.now.toISOString(),
  }));
  const inserted = await sql<{ gateway_id: string; outbox_id: string; seq: number }>`
    INSERT INTO applied_seqs (gateway_id, outbox_id, seq, applied_at)
    SELECT * FROM json_to_recordset(${JSON.stringify(rows)}::json)
      AS x(gateway_id text, outbox_id text, seq integer, applied_at text)
    ON CONFLICT (gateway_id, outbox_id, seq) DO NOTHING
    RETURNING gateway_id, outbox_id, seq`.execute(db);
  const key = (g: string, o: string, s: number) => JSON.stringify([g, o, s]);
  const isNew = new Set(inserted.rows.map((r) => key(r.gateway_id, r.outbox_id, r.seq)));
  const fresh: number[] = [];
  rows.forEach((r, i) => {
    // A report sent twice within the batch is applied once: the first copy takes the dedup row.
    if (isNew.delete(key(r.gateway_id, r.outbox_id, r.seq))) fresh.push(i);
  });
  return fresh;
}

/**
 * What one report makes of a device held locked, as `applyDeviceState` would write it (its
 * compare-and-set cannot lose here): null when it changes nothing.
 */
function step(
  device: DeviceRecord,
  { gatewayId, msg, now }: QueuedReport,
  cfg: CommandTimeoutConfig,
): { device: DeviceRecord; changed: boolean; latchOpened: boolean } | null {
  const ts = now.toISOString();
  const sensors = sensorReadingOf(msg, ts);
  const reading = { source: readingSource(gatewayId, msg.outbox_id), seq: msg.seq };
  const version = device.version + 1;
  if (!msg.lock_state) {
    // recordReadingInOrder: fields a later report has set stay; the version moves with the marks.
    const { fresh, stale, marks } = freshReading(device.sensor_marks, reading, sensors);
    if (stale.length > 0 && !marks) return null;
    const moved = marks ? { sensor_marks: marks, version } : {};
    return { device: { ...device, ...fresh, ...moved }, changed: false, latchOpened: false };
  }
  const input = { kind: "sensed" as const, lockState: msg.lock_state, doorReleased: msg.cause === "tap" };
  const { changes, changed, latchOpened } = stepDevice(device, {
    commandId: null,
    input,
    now,
    cfg,
    sensors,
    reading,
  });
  if (!changed && Object.keys(changes).length === 0) return null;
  return { device: { ...device, ...changes, version, updated_at: ts }, changed, latchOpened };
}

/** A state the hardware moved: sessions follow it, and who moved it and why is kept for a technician. */
async function recordChange(
  db: Db,
  { report, from, to }: { report: QueuedReport; from: DeviceRecord; to: DeviceRecord },
  log: Logger,
): Promise<void> {
  const { gatewayId, msg, now } = report;
  await sessionsFollowDevice(db, to, now, factTime(msg, now));
  log.info(
    { device_id: msg.device_id, from: from.state.value, to: to.state.value, cause: msg.cause },
    "device state follows the hardware",
  );
  await hardwareReportRepository(db).recordStateChange({
    gateway_id: gatewayId,
    outbox_id: msg.outbox_id ?? "",
    seq: msg.seq,
    device_id: msg.device_id,
    from_value: from.state.value,
    to_value: to.state.value,
    lock_state: msg.lock_state ?? to.lock_state,
    cause: msg.cause,
    detail: msg.detail,
    observed_at: msg.observed_at,
    received_at: now.toISOString(),
  });
}
