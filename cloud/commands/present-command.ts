import type { Command } from "../../shared/api/command.ts";
import { deviceUri } from "../../shared/api/uris.ts";
import type { CommandRecord } from "../store/command-record.ts";

export const commandUri = (id: string) => `/device/v1/commands/${id}`;

export function presentCommand(c: CommandRecord): Command {
  return {
    id: c.id,
    name: c.name,
    uri: commandUri(c.id),
    device: { id: c.device_id, uri: deviceUri(c.device_id) },
    state: { value: c.state.value, reason: c.state.reason, timeout_at: c.state.timeout_at },
    events: c.events,
  };
}
