import type { CommandEvent } from "../../shared/api/command.ts";
import {
  type CommandInput,
  type CommandState,
  type CommandStateValue,
  type CommandTimeouts,
  transitionCommand,
} from "../../shared/domain/command-machine.ts";
import {
  type DeviceInput,
  type DeviceStateValue,
  isInterim,
  type LockState,
  transitionDevice,
} from "../../shared/domain/device-machine.ts";
import { type DeviceType, familyOf, type PowerSaveStrategy } from "../../shared/domain/device-types.ts";
import { deviceStateOf, stateColumns } from "../devices/device-state.ts";
import type { Db } from "../store/db.ts";
import type { CommandsTable, DevicesTable } from "../store/schema.ts";
import { type CommandTimeoutConfig, timeoutsFor } from "./timeouts.ts";

type Tx = Pick<Db, "selectFrom" | "updateTable" | "insertInto">;

const MAX_CAS_ATTEMPTS = 5;

/**
 * Moves a command one step through its machine with a compare-and-set on its state, so two replicas
 * (or a late gateway report racing the deadline sweep) never both apply a transition.
 * Returns the updated row, or null when the input did not apply.
 */
export async function advanceCommand(
  tx: Tx,
  id: string,
  input: CommandInput,
  now: Date,
  timeouts: CommandTimeouts,
  events: (next: CommandState) => CommandEvent[],
): Promise<CommandsTable | null> {
  for (let attempt = 0; attempt < MAX_CAS_ATTEMPTS; attempt++) {
    const row = await tx.selectFrom("commands").selectAll().where("id", "=", id).executeTakeFirst();
    if (!row) return null;
    const current: CommandState = {
      value: row.state_value as CommandStateValue,
      reason: row.state_reason,
      timeout_at: row.state_timeout_at,
    };
    const next = transitionCommand(current, input, now, timeouts);
    if (!next) return null;
    const allEvents = [...(JSON.parse(row.events) as CommandEvent[]), ...events(next)];
    const set = {
      state_value: next.value,
      state_reason: next.reason,
      state_timeout_at: next.timeout_at,
      events: JSON.stringify(allEvents),
      updated_at: now.toISOString(),
    };
    const res = await tx
      .updateTable("commands")
      .set(set)
      .where("id", "=", id)
      .where("state_value", "=", row.state_value)
      .where("updated_at", "=", row.updated_at)
      .executeTakeFirst();
    if (res.numUpdatedRows > 0n) return { ...row, ...set };
  }
  throw new Error(`command ${id}: too much contention`);
}

/** Columns a gateway report writes whatever the state machine decides: what the hardware said. */
export type SensorColumns = Partial<
  Pick<DevicesTable, "door_open" | "item_present" | "sensors_at" | "sleep_state" | "last_seen_at">
> & { lock_state?: LockState };

export type DeviceStep = {
  deviceId: string;
  /** The command that caused the input; null for inputs no command caused (deadlines, sensors). */
  commandId: string | null;
  input: DeviceInput;
  now: Date;
  cfg: CommandTimeoutConfig;
  /** What the hardware reported with the input; `lock_state` here is a fresh reading. */
  sensors?: SensorColumns;
};

export type DeviceStepResult = { row: DevicesTable; changed: boolean; from: DeviceStateValue };

/**
 * Feeds the device machine one input with a compare-and-set on the device's version. Only the command
 * that drives the device's current interim state may move it; a superseded command's late report
 * changes nothing but the sensor columns. When the input came with a fresh lock reading and leaves the
 * device in a stable state, that state gives way to the reading (the hardware is the truth).
 */
export async function advanceDevice(tx: Tx, step: DeviceStep): Promise<DeviceStepResult | null> {
  const { deviceId, commandId, now, cfg } = step;
  const sensors = step.sensors ?? {};
  for (let attempt = 0; attempt < MAX_CAS_ATTEMPTS; attempt++) {
    const row = await tx.selectFrom("devices").selectAll().where("id", "=", deviceId).executeTakeFirst();
    if (!row) return null;
    const family = familyOf(row.type as DeviceType);
    const t = timeoutsFor(cfg, row.power_save_strategy as PowerSaveStrategy);
    const mine = commandId === null || row.command_id === commandId;
    // A door's release window consults the latest lock reading: one held open has not re-engaged.
    const input: DeviceInput =
      step.input.kind === "expired"
        ? { kind: "expired", lockState: (sensors.lock_state ?? row.lock_state) as LockState }
        : step.input;
    let state = deviceStateOf(row);
    let changed = false;
    const feed = (i: DeviceInput) => {
      const tr = transitionDevice(family, state, i, now, t);
      if (!tr.refused && tr.changed) {
        state = tr.state;
        changed = true;
      }
    };
    if (mine) feed(input);
    if (mine && sensors.lock_state && input.kind !== "sensed" && !isInterim(state.value))
      feed({ kind: "sensed", lockState: sensors.lock_state });
    const set: Partial<DevicesTable> = {
      ...sensors,
      version: row.version + 1,
      updated_at: now.toISOString(),
    };
    if (changed) {
      Object.assign(set, stateColumns(state));
      if (!isInterim(state.value)) set.command_id = null;
      // The occupant leaves with an unlock; a failed lock leaves the device unclaimed again.
      if (state.value === "UNLOCKED" || (input.kind === "failed" && state.value !== "LOCKED")) {
        set.user_id = null;
        set.user_access_key = null;
      }
      if (state.value !== "BOOKED") set.booked_by = null;
    }
    const from = row.state_value as DeviceStateValue;
    if (!changed && Object.keys(sensors).length === 0) return { row, changed: false, from };
    const res = await tx
      .updateTable("devices")
      .set(set)
      .where("id", "=", deviceId)
      .where("version", "=", row.version)
      .executeTakeFirst();
    if (res.numUpdatedRows > 0n) return { row: { ...row, ...set } as DevicesTable, changed, from };
  }
  throw new Error(`device ${deviceId}: too much contention`);
}

/**
 * Adds an event to a command without moving its state: what the hardware reported about a command the
 * cloud had already ended (superseded, or past its deadline) is still part of its history.
 */
export async function appendCommandEvent(tx: Tx, id: string, event: CommandEvent, now: Date): Promise<void> {
  for (let attempt = 0; attempt < MAX_CAS_ATTEMPTS; attempt++) {
    const row = await tx.selectFrom("commands").select("events").where("id", "=", id).executeTakeFirst();
    if (!row) return;
    const events = [...(JSON.parse(row.events) as CommandEvent[]), event];
    const res = await tx
      .updateTable("commands")
      .set({ events: JSON.stringify(events), updated_at: now.toISOString() })
      .where("id", "=", id)
      // The events themselves are the compare-and-set: two appends in one millisecond cannot both win.
      .where("events", "=", row.events)
      .executeTakeFirst();
    if (res.numUpdatedRows > 0n) return;
  }
  throw new Error(`command ${id}: too much contention`);
}
