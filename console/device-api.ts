import type { Command } from "../shared/api/command.ts";
import type { ConsoleCommand, ConsoleDevicePage } from "../shared/api/console-devices.ts";
import { call } from "./api.ts";

/**
 * The device page's calls: the device with its timeline, the operator functions, and following a command.
 * The shapes are what /console/api answers, typed in shared/api/console-devices.ts (the device: shared/api/device.ts).
 */

export type { Command, CommandEvent } from "../shared/api/command.ts";
export type {
  ConsoleCommand,
  ConsoleCommandName,
  ConsoleDevicePage as DevicePage,
  TimelineEntry,
} from "../shared/api/console-devices.ts";
export type { Device as DeviceState } from "../shared/api/device.ts";

export { FORCE_UNLOCK_REASONS, REASONS_NEEDING_COMMENT } from "../shared/domain/force-unlock-reasons.ts";

const path = (id: string) => encodeURIComponent(id);

export const getDevicePage = (id: string) =>
  call<ConsoleDevicePage>("GET", `/console/api/devices/${path(id)}`);

export const sendCommand = (deviceId: string, body: ConsoleCommand) =>
  call<Command>("POST", `/console/api/devices/${path(deviceId)}/commands`, body);

/** The command once it has ended or `waitS` seconds have passed (the cloud's `Prefer: wait`). */
export const followCommand = (id: string, waitS: number) =>
  call<Command>("GET", `/console/api/commands/${path(id)}`, undefined, { prefer: `wait=${waitS}` });
