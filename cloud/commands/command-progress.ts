import type { Logger } from "pino";
import type { CommandEvent } from "../../shared/api/command.ts";
import type { CommandInput } from "../../shared/domain/command-machine.ts";
import type { DeviceInput, LockState } from "../../shared/domain/device-machine.ts";
import type { CommandName } from "../../shared/domain/device-types.ts";
import type { CommandProgress } from "../../shared/wire/messages.ts";
import { drivesDeviceState, successEventFor } from "./command-events.ts";
import { advanceCommand, advanceDevice, appendCommandEvent, type SensorColumns } from "./command-store.ts";
import type { CommandTimeoutConfig } from "./timeouts.ts";

type Tx = Parameters<typeof advanceCommand>[0];

/** Events the cloud writes when it ends a command itself, before the hardware said anything. */
const ENDED_BY_CLOUD = new Set(["REQUEST_TIMED_OUT", "REQUEST_SUPERSEDED"]);
const LATE = "reported after the command had ended";

/**
 * Applies a gateway's report about a command (flow 1, step 7). The gateway must own the device the
 * command is for; a report about anyone else's command is dropped (S30).
 * Returns false when the report was rejected, true when it was applied or was a harmless repeat.
 */
export async function applyCommandProgress(
  tx: Tx,
  gatewayId: string,
  msg: CommandProgress,
  cfg: CommandTimeoutConfig,
  now: Date,
  log: Logger,
): Promise<boolean> {
  const cmd = await tx
    .selectFrom("commands")
    .innerJoin("devices", "devices.id", "commands.device_id")
    .select(["commands.id", "commands.name", "commands.device_id", "commands.events", "devices.gateway_id"])
    .where("commands.id", "=", msg.command_id)
    .executeTakeFirst();
  if (!cmd || cmd.device_id !== msg.device_id || cmd.gateway_id !== gatewayId) {
    log.warn(
      { gateway_id: gatewayId, command_id: msg.command_id },
      "progress for a command this gateway does not own",
    );
    return false;
  }
  const name = cmd.name as CommandName;
  const ts = now.toISOString();
  const at = msg.observed_at ?? ts;
  let input: CommandInput;
  let deviceInput: DeviceInput;
  let event: CommandEvent;
  switch (msg.state) {
    case "RECEIVED":
      input = { kind: "received" };
      deviceInput = { kind: "received", name };
      event = { name: "RESPONSE_COMMAND_RECEIVED", timestamp: at };
      break;
    case "SUCCESS":
      input = { kind: "succeeded", reason: msg.reason };
      deviceInput = { kind: "confirmed", name };
      event = { name: successEventFor(name), timestamp: at };
      break;
    case "ERROR":
      input = { kind: "failed", reason: msg.reason || "the gateway reported an error" };
      deviceInput = { kind: "failed" };
      event = { name: "RESPONSE_ERROR", value: msg.reason, timestamp: at };
      break;
  }
  const sensors: SensorColumns = msg.lock_state ? { lock_state: msg.lock_state, sensors_at: ts } : {};
  const sensed = (lockState: LockState) =>
    advanceDevice(tx, {
      deviceId: cmd.device_id,
      commandId: null,
      input: { kind: "sensed", lockState },
      now,
      cfg,
      sensors,
    });
  // The gateway has the command, so the broker had it: when its report overtakes the broker's
  // acknowledgement of our publish, record the hand-over first (REQUEST_SENT) so no step is missing.
  await advanceCommand(tx, cmd.id, { kind: "dispatched" }, now, cfg, () => [
    { name: "REQUEST_SENT", timestamp: ts },
  ]);
  const row = await advanceCommand(tx, cmd.id, input, now, cfg, () => [event]);
  if (!row) {
    // The cloud already ended this command (superseded, or past its deadline) but the hardware went on:
    // what it did is recorded on the command, whose state stays as it was (issue: force commands are honest).
    const events = JSON.parse(cmd.events) as CommandEvent[];
    if (msg.state !== "RECEIVED" && events.some((e) => ENDED_BY_CLOUD.has(e.name))) {
      const late = { ...event, value: event.value ? `${LATE}: ${event.value}` : LATE };
      if (!events.some((e) => e.name === late.name && e.value === late.value))
        await appendCommandEvent(tx, cmd.id, late, now);
    }
    // What the hardware says about the lock is the truth, unless another command now holds the device.
    if (msg.lock_state) await sensed(msg.lock_state);
    return true;
  }
  if (drivesDeviceState(name)) {
    await advanceDevice(tx, {
      deviceId: cmd.device_id,
      commandId: cmd.id,
      input: deviceInput,
      now,
      cfg,
      sensors,
    });
  } else if (msg.lock_state) {
    // sync-device and take-photo report a reading, not a movement: reconcile with it.
    await sensed(msg.lock_state);
  }
  return true;
}
