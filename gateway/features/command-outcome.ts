import type { CommandProgress, CommandRequest } from "../../shared/wire/messages.ts";
import type { Outcome } from "../ports.ts";

/**
 * An outcome, and what it writes to the store: committed with the report of its success, never without it.
 * `heldByAnother`: refused because someone else holds the device, so its latch reading is theirs.
 */
export type Performed = Outcome & { commit?: () => void; heldByAnother?: boolean };

/** Nothing moved and nothing to commit: the command ends ERROR with `reason`. */
export const failed = (reason: string): Performed => ({ ok: false, reason, lockState: null, sensors: null });

/** Done without moving anything: what it writes (`commit`) goes with the SUCCESS. */
export const succeeded = (reason: string, commit: () => void): Performed => ({
  ok: true,
  reason,
  lockState: null,
  sensors: null,
  commit,
});

/** The outcome's report (its outbox fields aside): its latch reading, and whether that reading is someone else's. */
export const outcomeReport = (
  req: Pick<CommandRequest, "command_id" | "device_id">,
  o: Performed,
): Omit<CommandProgress, "gateway_id" | "seq" | "observed_at" | "observed_cloud_at" | "outbox_id"> => ({
  type: "command_progress",
  command_id: req.command_id,
  device_id: req.device_id,
  state: o.ok ? "SUCCESS" : "ERROR",
  reason: o.reason,
  ...(o.lockState ? { lock_state: o.lockState } : {}),
  ...(o.heldByAnother ? { held_by_another: true } : {}),
});
