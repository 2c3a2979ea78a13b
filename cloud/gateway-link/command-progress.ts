import type { CommandEvent } from "../../shared/api/command.ts";
import type { CommandInput } from "../../shared/domain/command-machine.ts";
import type { DeviceInput, LockState } from "../../shared/domain/device-machine.ts";
import { factTime } from "../../shared/wire/fact-time.ts";
import type { CommandProgress } from "../../shared/wire/messages.ts";
import { advanceCommand } from "../commands/advance-command.ts";
import { drivesDeviceState, endsBooking, successEventFor } from "../commands/command-events.ts";
import { commandRepository } from "../commands/command-repository.ts";
import { photoUri } from "../commands/photo-uri.ts";
import { advanceDevice } from "../devices/advance-device.ts";
import type { SensorReading } from "../devices/device-repository.ts";
import { readingSource } from "../devices/reading-order.ts";
import { onLateSuccess } from "../sessions/session-recorder.ts";
import type { CommandRecord } from "../store/command-record.ts";
import type { Executor } from "../store/db.ts";
import type { GatewayReport } from "./gateway-reports.ts";

/** Events the cloud writes when it ends a command itself, before the hardware said anything. */
const ENDED_BY_CLOUD = new Set(["REQUEST_TIMED_OUT", "REQUEST_SUPERSEDED"]);
const LATE = "reported after the command had ended";

type CommandReport = GatewayReport<CommandProgress> & { ended?: (command: CommandRecord) => void };

/**
 * Applies a gateway's report about a command (flow 1, step 7). The gateway must own the device the
 * command is for; a report about anyone else's command is dropped (S30).
 * Returns false when the report was rejected, true when it was applied or was a harmless repeat. `ended` is
 * told the command as this report ended it (SUCCESS or ERROR), to answer those waiting on it once committed.
 * The command is read once: each step starts from the record the one before read or wrote.
 */
export async function applyCommandProgress(
  tx: Executor,
  { gatewayId, msg, cfg, now, log, refuse, ended }: CommandReport,
): Promise<boolean> {
  const found = await commandRepository(tx).findWithGateway(msg.command_id);
  if (!found || found.command.device_id !== msg.device_id || found.gatewayId !== gatewayId) {
    log.warn(
      { gateway_id: gatewayId, command_id: msg.command_id },
      "progress for a command this gateway does not own",
    );
    refuse?.("foreign_command");
    return false;
  }
  const cmd = found.command;
  const name = cmd.name;
  const ts = now.toISOString();
  // The event's time is the cloud's (a gateway's wall clock may be a day off); observed_at stays in the outbox row.
  const at = factTime(msg, now);
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
      // A book's booking ends when the cloud said it would, whenever the gateway confirms it.
      deviceInput = { kind: "confirmed", name, bookingUntil: cmd.wire_request?.params.booking?.until };
      event = { name: successEventFor(name), timestamp: at };
      // The photo's address, served once its parts have all arrived (they may come after this).
      if (name === "take-photo") event.value = photoUri(cmd.id);
      break;
    case "ERROR":
      input = { kind: "failed", reason: msg.reason || "the gateway reported an error" };
      deviceInput = { kind: "failed", heldByAnother: msg.held_by_another === true };
      event = { name: "RESPONSE_ERROR", value: msg.reason, timestamp: at };
      break;
  }
  const sensors: SensorReading = msg.lock_state ? { lock_state: msg.lock_state, sensors_at: ts } : {};
  // The lock reading keeps outbox order with the gateway's other reports (replicas apply them in any).
  const reading = { source: readingSource(gatewayId, msg.outbox_id), seq: msg.seq };
  const step = (commandId: string | null, input: DeviceInput) =>
    advanceDevice(tx, {
      deviceId: cmd.device_id,
      commandId,
      input,
      now,
      happenedAt: at,
      cfg,
      sensors,
      reading,
    });
  const sensed = (lockState: LockState) => step(null, { kind: "sensed", lockState });
  // The gateway has the command, so the broker had it: when its report overtakes the broker's
  // acknowledgement of our publish, record the hand-over first (REQUEST_SENT) so no step is missing.
  const handedOver = await advanceCommand(tx, {
    commandId: cmd.id,
    known: cmd,
    input: { kind: "dispatched" },
    now,
    cfg,
    events: () => [{ name: "REQUEST_SENT", timestamp: ts }],
  });
  const moved = await advanceCommand(tx, {
    commandId: cmd.id,
    known: handedOver ?? cmd,
    input,
    now,
    happenedAt: at,
    cfg,
    events: () => [event],
  });
  if (!moved) {
    await recordOvertaken(tx, cmd, msg.state, event, now);
    if (msg.state === "SUCCESS") await onLateSuccess(tx, cmd, now, at);
    // What the hardware says about the lock is the truth, unless another command now holds the device.
    if (msg.lock_state) await sensed(msg.lock_state);
    return true;
  }
  if (drivesDeviceState(name)) await step(cmd.id, deviceInput);
  // A cancel holds nothing: its success ends whatever booking the device has (or falls back to) then.
  else if (endsBooking(name)) {
    if (msg.state === "SUCCESS") await step(null, deviceInput);
  }
  // sync-device and take-photo report a reading, not a movement: reconcile with it.
  else if (msg.lock_state) await sensed(msg.lock_state);
  if (msg.state !== "RECEIVED") ended?.(moved);
  return true;
}

/** A report the command's state did not take: what it still tells is added to the command's history. */
async function recordOvertaken(
  tx: Executor,
  cmd: CommandRecord,
  state: CommandProgress["state"],
  event: CommandEvent,
  now: Date,
): Promise<void> {
  const commands = commandRepository(tx);
  // Overtaken by the outcome (another replica applied that first, or this was sent again after the
  // replica that had it died): the hand-over is history all the same, in its place before the outcome.
  if (state === "RECEIVED" && !cmd.events.some((e) => e.name === event.name || ENDED_BY_CLOUD.has(e.name))) {
    const handOver = new Set(["REQUEST_INITIATED", "REQUEST_SENT"]);
    await commands.appendEvent(cmd.id, event, now, (es) => {
      const i = es.findIndex((e) => !handOver.has(e.name));
      return i < 0 ? es.length : i;
    });
  }
  // The cloud already ended this command (superseded, or past its deadline) but the hardware went on:
  // what it did is recorded on the command, whose state stays as it was (issue: force commands are honest).
  if (state !== "RECEIVED" && cmd.events.some((e) => ENDED_BY_CLOUD.has(e.name))) {
    const late = { ...event, value: event.value ? `${LATE}: ${event.value}` : LATE };
    if (!cmd.events.some((e) => e.name === late.name && e.value === late.value))
      await commands.appendEvent(cmd.id, late, now);
  }
}
