import type { DeviceState, DeviceStateValue, StableState } from "../../shared/domain/device-machine.ts";
import type { DevicesTable } from "../store/schema.ts";

/** Reads the machine's view of a device row. */
export function deviceStateOf(row: DevicesTable): DeviceState {
  return {
    value: row.state_value as DeviceStateValue,
    changed_at: row.state_changed_at,
    timeout_at: row.state_timeout_at,
    restore: row.state_restore ? (JSON.parse(row.state_restore) as StableState) : null,
  };
}

/** The columns that store a machine state. */
export function stateColumns(s: DeviceState) {
  return {
    state_value: s.value,
    state_changed_at: s.changed_at,
    state_timeout_at: s.timeout_at,
    state_restore: s.restore ? JSON.stringify(s.restore) : null,
  };
}
