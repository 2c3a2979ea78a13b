import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { Logger } from "pino";
import type { Clock } from "../../shared/clock.ts";
import type { CommandRequest } from "../../shared/wire/messages.ts";
import type { DeviceRegistry } from "../devices/device-registry.ts";
import type { Action, Actuator, Outcome } from "../hardware/actuator.ts";
import type { Camera } from "../ports.ts";
import type { CommandLog } from "../store/command-log.ts";
import type { GatewayDb } from "../store/open-db.ts";
import type { Outbox } from "../store/outbox.ts";

export type ExecutorDeps = {
  db: GatewayDb;
  registry: DeviceRegistry;
  actuator: Actuator;
  camera: Camera | null;
  commandLog: CommandLog;
  outbox: Outbox;
  clock: Clock;
  log: Logger;
  stateDir: string;
  onFinished?: (name: string, ok: boolean) => void;
};

const ACTION_OF: Partial<Record<CommandRequest["name"], Action>> = {
  lock: "lock",
  "force-lock": "lock",
  unlock: "unlock",
  "force-unlock": "unlock",
};

/**
 * Executes commands from the cloud (flow 1, steps 3–6). The command id is the idempotency key: an id seen
 * before is never actuated again — its outcome is reported again instead (S31, F8). A command past its
 * deadline is refused, never actuated late (F7). Taking a command and reporting RECEIVED commit together,
 * as do the outcome and its report, so a crash can lose neither.
 */
export function createCommandExecutor(d: ExecutorDeps) {
  const inFlight = new Set<string>();

  function report(
    req: Pick<CommandRequest, "command_id" | "device_id">,
    state: "RECEIVED" | "SUCCESS" | "ERROR",
    reason = "",
    lockState: "LOCKED" | "UNLOCKED" | null = null,
  ) {
    d.outbox.append({
      type: "command_progress",
      command_id: req.command_id,
      device_id: req.device_id,
      state,
      reason,
      ...(lockState ? { lock_state: lockState } : {}),
    });
  }

  const finish = d.db.transaction((req: CommandRequest, o: Outcome, known: boolean) => {
    const at = d.clock.now().toISOString();
    if (!known)
      d.commandLog.record({
        command_id: req.command_id,
        device_id: req.device_id,
        name: req.name,
        state: "RECEIVED",
        at,
      });
    d.commandLog.finish(req.command_id, o.ok ? "SUCCESS" : "ERROR", o.reason, o.lockState, at);
    report(req, o.ok ? "SUCCESS" : "ERROR", o.reason, o.lockState);
  });

  const take = d.db.transaction((req: CommandRequest) => {
    d.commandLog.record({
      command_id: req.command_id,
      device_id: req.device_id,
      name: req.name,
      state: "RECEIVED",
      at: d.clock.now().toISOString(),
    });
    report(req, "RECEIVED");
  });

  async function perform(req: CommandRequest): Promise<Outcome> {
    const device = d.registry.get(req.device_id);
    if (!device) return { ok: false, reason: "device unknown to this gateway", lockState: null };
    const action = ACTION_OF[req.name];
    if (action) return d.actuator.run(device, action);
    if (req.name === "sync-device")
      return d.actuator.run(device, req.params.power_cycle ? "power_cycle" : "status");
    if (req.name === "take-photo") {
      if (!d.camera || !device.has_camera)
        return { ok: false, reason: "no camera on this device", lockState: null };
      const photo = await d.camera.capture();
      const dir = path.join(d.stateDir, "photos");
      mkdirSync(dir, { recursive: true });
      writeFileSync(path.join(dir, `${req.command_id}.jpg`), photo.bytes);
      return { ok: true, reason: `photo taken (${photo.bytes.length} bytes)`, lockState: null };
    }
    return { ok: false, reason: `${req.name} is not a hardware command`, lockState: null };
  }

  return {
    async handle(req: CommandRequest): Promise<void> {
      if (inFlight.has(req.command_id)) return; // a redelivery while we are still working on it
      const seen = d.commandLog.get(req.command_id);
      if (seen) {
        d.log.info(
          { command_id: req.command_id, state: seen.state },
          "repeated command: reporting its outcome again",
        );
        if (seen.state !== "RECEIVED") report(req, seen.state, seen.reason, seen.lock_state);
        return;
      }
      const now = d.clock.now();
      if (now.getTime() >= Date.parse(req.expires_at)) {
        d.log.warn({ command_id: req.command_id, expires_at: req.expires_at }, "stale command refused");
        finish(
          req,
          {
            ok: false,
            reason: "the command arrived after its deadline and was not executed",
            lockState: null,
          },
          false,
        );
        return;
      }
      inFlight.add(req.command_id);
      try {
        take(req);
        let outcome: Outcome;
        try {
          outcome = await perform(req);
        } catch (err) {
          outcome = { ok: false, reason: `gateway error: ${(err as Error).message}`, lockState: null };
        }
        finish(req, outcome, true);
        d.onFinished?.(req.name, outcome.ok);
        d.log.info(
          { command_id: req.command_id, name: req.name, ok: outcome.ok, reason: outcome.reason },
          "command executed",
        );
      } finally {
        inFlight.delete(req.command_id);
      }
    },

    /**
     * Commands taken but not finished when the process died: the outcome is unknown, so they end in ERROR
     * (the cloud returns the device to its previous state) rather than staying open forever.
     */
    recoverInterrupted(): number {
      const open = d.db
        .prepare("SELECT command_id, device_id, name FROM command_log WHERE state = 'RECEIVED'")
        .all() as CommandRequest[];
      for (const c of open) {
        finish(
          c,
          { ok: false, reason: "interrupted by a gateway restart; the result is unknown", lockState: null },
          true,
        );
      }
      return open.length;
    },
  };
}

export type CommandExecutor = ReturnType<typeof createCommandExecutor>;
