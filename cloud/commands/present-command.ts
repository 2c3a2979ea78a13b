import type { Command, CommandEvent } from "../../shared/api/command.ts";
import type { CommandStateValue } from "../../shared/domain/command-machine.ts";
import type { CommandName } from "../../shared/domain/device-types.ts";
import { deviceUri } from "../devices/present-device.ts";
import type { CommandsTable } from "../store/schema.ts";

export const commandUri = (id: string) => `/device/v1/commands/${id}`;

export function presentCommand(row: CommandsTable): Command {
  return {
    id: row.id,
    name: row.name as CommandName,
    uri: commandUri(row.id),
    device: { id: row.device_id, uri: deviceUri(row.device_id) },
    state: {
      value: row.state_value as CommandStateValue,
      reason: row.state_reason,
      timeout_at: row.state_timeout_at,
    },
    events: JSON.parse(row.events) as CommandEvent[],
  };
}
