import type { CommandEvent } from "../../shared/api/command.ts";
import {
  type CommandInput,
  type CommandState,
  type CommandStateValue,
  type CommandTimeouts,
  transitionCommand,
} from "../../shared/domain/command-machine.ts";
import { type DeviceInput, isInterim, transitionDevice } from "../../shared/domain/device-machine.ts";
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

/**
 * Feeds the device machine an input caused by command `commandId`. Only the command that drives the
 * device's current interim state may move it; a superseded command's late report changes nothing but
 * the physical lock state.
 */
export async function advanceDevice(
  tx: Tx,
  deviceId: string,
  commandId: string | null,
  input: DeviceInput,
  now: Date,
  cfg: CommandTimeoutConfig,
  extra: { lock_state?: string } = {},
): Promise<{ row: DevicesTable; changed: boolean } | null> {
  for (let attempt = 0; attempt < MAX_CAS_ATTEMPTS; attempt++) {
    const row = await tx.selectFrom("devices").selectAll().where("id", "=", deviceId).executeTakeFirst();
    if (!row) return null;
    const mine = commandId === null || row.command_id === commandId;
    const t = timeoutsFor(cfg, row.power_save_strategy as PowerSaveStrategy);
    const tr = mine
      ? transitionDevice(familyOf(row.type as DeviceType), deviceStateOf(row), input, now, t)
      : null;
    const changed = tr !== null && !tr.refused && tr.changed;
    const set: Partial<DevicesTable> = { ...extra, version: row.version + 1, updated_at: now.toISOString() };
    if (tr && !tr.refused && changed) {
      Object.assign(set, stateColumns(tr.state));
      if (!isInterim(tr.state.value)) set.command_id = null;
      // The occupant leaves with an unlock; a failed lock leaves the device unclaimed again.
      if (tr.state.value === "UNLOCKED" || (input.kind === "failed" && tr.state.value !== "LOCKED")) {
        set.user_id = null;
        set.user_access_key = null;
      }
      if (tr.state.value !== "BOOKED") set.booked_by = null;
    }
    if (!changed && extra.lock_state === undefined) return { row, changed: false };
    const res = await tx
      .updateTable("devices")
      .set(set)
      .where("id", "=", deviceId)
      .where("version", "=", row.version)
      .executeTakeFirst();
    if (res.numUpdatedRows > 0n) return { row: { ...row, ...set } as DevicesTable, changed };
  }
  throw new Error(`device ${deviceId}: too much contention`);
}
