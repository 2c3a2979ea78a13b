import { z } from "zod";
import { COMMAND_STATE_VALUES } from "../domain/command-machine.ts";
import { COMMAND_NAMES } from "../domain/device-types.ts";
import { FORCE_UNLOCK_REASONS, REASONS_NEEDING_COMMENT } from "../domain/force-unlock-reasons.ts";
import { Reference } from "./common.ts";

export { FORCE_UNLOCK_REASONS, REASONS_NEEDING_COMMENT };

/**
 * Command request body (spec: Endpoints → Command request body). Field-to-command rules that need more
 * than one field (reason only for force-unlock, comment length) are checked in the command service so
 * that the error names the field and the command.
 */
export const CommandRequest = z
  .strictObject({
    command: z.enum(COMMAND_NAMES),
    timeout_at: z.iso.datetime({ offset: true }).optional().describe("book only; default 1 hour from now"),
    user_id: z.string().min(1).max(200).optional().describe("lock only; needs ACT_ON_BEHALF_OF"),
    reason: z.enum(FORCE_UNLOCK_REASONS).optional().describe("force-unlock only; required there"),
    comment: z
      .string()
      .max(1000)
      .optional()
      .describe("force-unlock with STUCK_USER_OTHER_ISSUE or OTHER; ≥ 5 characters"),
    power_cycle: z.boolean().optional().describe("sync-device only; default false"),
  })
  .meta({ id: "CommandRequest" });
export type CommandRequest = z.infer<typeof CommandRequest>;

export const CommandEvent = z.object({
  name: z.string(),
  value: z.string().optional(),
  timestamp: z.string(),
});
export type CommandEvent = z.infer<typeof CommandEvent>;

export const Command = z
  .object({
    id: z.uuid(),
    name: z.enum(COMMAND_NAMES),
    uri: z.string(),
    device: Reference,
    state: z.object({
      value: z.enum(COMMAND_STATE_VALUES),
      reason: z.string(),
      timeout_at: z.string().nullable(),
    }),
    events: z.array(CommandEvent),
  })
  .meta({ id: "Command" });
export type Command = z.infer<typeof Command>;
