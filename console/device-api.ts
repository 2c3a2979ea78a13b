import { call } from "./api.ts";

/**
 * The device page's calls: the device with its timeline, the operator functions, and following a command.
 * The shapes are what /console/api answers (cloud/console/device-timeline.ts, shared/api/device.ts).
 */

export type DeviceState = {
  id: string;
  alias: string;
  type: string;
  state: { value: string; changed_at: string; timeout_at: string | null };
  lock_state: string;
  hardware_state: string;
  heartbeat_v2: { health: string } | null;
  sleep_state: string;
  location: { id: string };
  user: { id: string | null; access_key: string | null } | null;
};

export type CommandEvent = { name: string; value?: string; timestamp: string };

export type TimelineEntry =
  | {
      kind: "command";
      at: string;
      id: string;
      name: string;
      state: { value: string; reason: string };
      requested_by: string;
      reason: string | null;
      comment: string | null;
      events: CommandEvent[];
    }
  | {
      kind: "state_change";
      at: string;
      from: string;
      to: string;
      lock_state: string;
      cause: string;
      detail: string;
    }
  | {
      kind: "audit";
      at: string;
      actor: { kind: string; id: string; email?: string };
      action: string;
      reason: string | null;
      comment: string | null;
    }
  | {
      kind: "session";
      at: string;
      id: string;
      status: string;
      user_id: string;
      access_key_id: string | null;
      start_time: string | null;
      end_time: string | null;
      ended_by: string | null;
    }
  | {
      kind: "access";
      at: string;
      card_id: string;
      reader: string;
      granted: boolean;
      action: string;
      reason: string;
      decided_by: string;
    };

export type DevicePage = { device: DeviceState; timeline: TimelineEntry[] };

export type Command = {
  id: string;
  name: string;
  state: { value: string; reason: string; timeout_at: string | null };
  events: CommandEvent[];
};

export type ConsoleCommandName = "force-unlock" | "force-lock" | "force-cancel-booking" | "sync-device";
export type ConsoleCommand = {
  command: ConsoleCommandName;
  reason?: string;
  comment?: string;
  power_cycle?: boolean;
};

export { FORCE_UNLOCK_REASONS, REASONS_NEEDING_COMMENT } from "../shared/domain/force-unlock-reasons.ts";

const path = (id: string) => encodeURIComponent(id);

export const getDevicePage = (id: string) => call<DevicePage>("GET", `/console/api/devices/${path(id)}`);

export const sendCommand = (deviceId: string, body: ConsoleCommand) =>
  call<Command>("POST", `/console/api/devices/${path(deviceId)}/commands`, body);

/** The command once it has ended or `waitS` seconds have passed (the cloud's `Prefer: wait`). */
export const followCommand = (id: string, waitS: number) =>
  call<Command>("GET", `/console/api/commands/${path(id)}`, undefined, { prefer: `wait=${waitS}` });
