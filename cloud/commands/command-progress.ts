import type { Logger } from "pino";
import type { Clock, TimerHandle } from "../../shared/clock.ts";
import type { CommandInput } from "../../shared/domain/command-machine.ts";
import type { DeviceInput } from "../../shared/domain/device-machine.ts";
import type { CommandName } from "../../shared/domain/device-types.ts";
import type { CommandProgress } from "../../shared/wire/messages.ts";
import type { Db } from "../store/db.ts";
import { drivesDeviceState, successEventFor } from "./command-events.ts";
import { advanceCommand, advanceDevice } from "./command-store.ts";
import type { CommandTimeoutConfig } from "./timeouts.ts";

type Tx = Parameters<typeof advanceCommand>[0];

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
    .select(["commands.id", "commands.name", "commands.device_id", "devices.gateway_id"])
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
  let input: CommandInput;
  let deviceInput: DeviceInput;
  let event: { name: string; value?: string };
  switch (msg.state) {
    case "RECEIVED":
      input = { kind: "received" };
      deviceInput = { kind: "received", name };
      event = { name: "RESPONSE_COMMAND_RECEIVED" };
      break;
    case "SUCCESS":
      input = { kind: "succeeded", reason: msg.reason };
      deviceInput = { kind: "confirmed", name };
      event = { name: successEventFor(name) };
      break;
    case "ERROR":
      input = { kind: "failed", reason: msg.reason || "the gateway reported an error" };
      deviceInput = { kind: "failed" };
      event = { name: "RESPONSE_ERROR", value: msg.reason };
      break;
  }
  const row = await advanceCommand(tx, cmd.id, input, now, cfg, () => [
    { ...event, timestamp: msg.observed_at ?? ts },
  ]);
  if (!row) {
    // Already terminal or past this step: the command does not move, but what the hardware says about the
    // physical lock is still the truth.
    if (msg.lock_state) {
      await tx
        .updateTable("devices")
        .set({ lock_state: msg.lock_state })
        .where("id", "=", cmd.device_id)
        .execute();
    }
    return true;
  }
  if (drivesDeviceState(name)) {
    await advanceDevice(
      tx,
      cmd.device_id,
      cmd.id,
      deviceInput,
      now,
      cfg,
      msg.lock_state ? { lock_state: msg.lock_state } : {},
    );
  } else if (msg.lock_state) {
    await tx
      .updateTable("devices")
      .set({ lock_state: msg.lock_state })
      .where("id", "=", cmd.device_id)
      .execute();
  }
  return true;
}

/**
 * Enforces every deadline in the cloud itself (flow 1): commands past their state's timeout end in
 * ERROR and return their device; bookings and door releases expire. Safe across replicas because each
 * write is a compare-and-set.
 */
export function createDeadlineSweeper(deps: {
  db: Db;
  clock: Clock;
  timeouts: CommandTimeoutConfig;
  log: Logger;
  everyMs?: number;
}) {
  const { db, clock, timeouts, log } = deps;
  const everyMs = deps.everyMs ?? 1_000;
  let timer: TimerHandle | null = null;
  let running = false;

  async function sweep(): Promise<number> {
    const now = clock.now();
    const ts = now.toISOString();
    let moved = 0;
    const due = await db
      .selectFrom("commands")
      .select(["id", "device_id"])
      .where("state_value", "in", ["NOT_SENT", "SENT", "RECEIVED"])
      .where("state_timeout_at", "<=", ts)
      .limit(500)
      .execute();
    for (const c of due) {
      await db.transaction().execute(async (trx) => {
        const row = await advanceCommand(trx, c.id, { kind: "deadline" }, now, timeouts, (s) => [
          { name: "REQUEST_TIMED_OUT", value: s.reason, timestamp: ts },
        ]);
        if (!row) return;
        moved++;
        await advanceDevice(trx, c.device_id, c.id, { kind: "failed" }, now, timeouts);
      });
    }
    const expiring = await db
      .selectFrom("devices")
      .select("id")
      .where("state_timeout_at", "<=", ts)
      .where("command_id", "is", null)
      .limit(500)
      .execute();
    for (const d of expiring) {
      const res = await advanceDevice(db, d.id, null, { kind: "expired" }, now, timeouts);
      if (res?.changed) moved++;
    }
    return moved;
  }

  function schedule() {
    timer = clock.setTimer(everyMs, () => {
      if (running) return schedule();
      running = true;
      sweep()
        .catch((err: unknown) => log.error({ err }, "deadline sweep failed"))
        .finally(() => {
          running = false;
          if (timer) schedule();
        });
    });
  }

  return {
    sweep,
    start() {
      if (!timer) schedule();
    },
    stop() {
      if (timer) clock.clearTimer(timer);
      timer = null;
    },
  };
}
