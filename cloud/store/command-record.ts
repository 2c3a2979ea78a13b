import type { CommandEvent, CommandRequest } from "../../shared/api/command.ts";
import type { CommandState } from "../../shared/domain/command-machine.ts";
import type { CommandRequest as WireCommand } from "../../shared/wire/messages.ts";
import type { CommandsTable } from "./schema.ts";

type StateColumns = "state_value" | "state_reason" | "state_timeout_at";

/**
 * A command as the services see it: the machine's state in one piece and its JSON parsed. Only the
 * command repository (cloud/commands/command-repository.ts) reads or writes the `commands` table's columns.
 */
export type CommandRecord = Omit<CommandsTable, StateColumns | "params" | "events" | "wire_request"> & {
  state: CommandState;
  params: CommandRequest;
  events: CommandEvent[];
  /** As published to the gateway; null for the commands the cloud settles itself. */
  wire_request: WireCommand | null;
};
