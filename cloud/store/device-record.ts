import type { DeviceState } from "../../shared/domain/device-machine.ts";
import type { DevicesTable } from "./schema.ts";
import type { DeviceAttrs } from "./tables/device-attrs.ts";

type StateColumns = "state_value" | "state_changed_at" | "state_timeout_at" | "state_restore";
type FlagColumns = "has_camera" | "door_open" | "item_present";

/** Columns behind `last_seen_at` (migration 016): read through it, never on their own. */
type SeenColumns = "seen_at" | "reachable";

/**
 * A device as the services see it: the machine's state in one piece, the attributes parsed, the 0/1
 * columns as booleans and when it was last seen. The device repository (cloud/devices/device-repository.ts)
 * reads and writes the `devices` table's columns; the manifest repository only declares devices.
 */
export type DeviceRecord = Omit<DevicesTable, StateColumns | FlagColumns | SeenColumns | "attrs"> & {
  last_seen_at: string | null;
  state: DeviceState;
  attrs: DeviceAttrs;
  has_camera: boolean;
  /** Last sensor report; null before the first. */
  door_open: boolean | null;
  item_present: boolean | null;
};
