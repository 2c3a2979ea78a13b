import { randomUUID } from "node:crypto";
import type { Logger } from "pino";
import type { Command, CommandEvent, CommandRequest } from "../../shared/api/command.ts";
import type { Clock } from "../../shared/clock.ts";
import { initialCommandState } from "../../shared/domain/command-machine.ts";
import { transitionDevice } from "../../shared/domain/device-machine.ts";
import {
  type DeviceType,
  familyOf,
  isCloudOnlyCommand,
  isLockOrUnlock,
  type PowerSaveStrategy,
} from "../../shared/domain/device-types.ts";
import { AppError } from "../../shared/errors.ts";
import type { Principal } from "../auth/principal.ts";
import { deviceStateOf, stateColumns } from "../devices/device-state.ts";
import type { GatewayPublisher } from "../ports.ts";
import type { Db } from "../store/db.ts";
import type { DevicesTable } from "../store/schema.ts";
import { drivesDeviceState, successEventFor } from "./command-events.ts";
import { checkCommandRequest } from "./command-rules.ts";
import { advanceCommand, advanceDevice } from "./command-store.ts";
import { presentCommand } from "./present-command.ts";
import { type CommandTimeoutConfig, throttleWindowMs, timeoutsFor } from "./timeouts.ts";

export type CommandServiceDeps = {
  db: Db;
  clock: Clock;
  gateways: GatewayPublisher;
  timeouts: CommandTimeoutConfig;
  log: Logger;
  /** How long POST waits for the broker's acknowledgement before answering (the send goes on after). */
  publishWaitMs?: number;
};

const MAX_ATTEMPTS = 5;

export function createCommandService(deps: CommandServiceDeps) {
  const { db, clock, gateways, timeouts, log } = deps;
  const publishWaitMs = deps.publishWaitMs ?? 2_000;

  async function findDevice(principal: Principal, id: string): Promise<DevicesTable> {
    const row = await db
      .selectFrom("devices")
      .selectAll()
      .where("id", "=", id)
      .where("operator_id", "=", principal.operatorId)
      .executeTakeFirst();
    if (!row) throw new AppError("ERRORS.NOT_FOUND", `Device ${id} not found`);
    return row;
  }

  /** Checks everything, then writes the device's new state and the command in one transaction. */
  async function accept(principal: Principal, deviceId: string, body: CommandRequest) {
    const name = body.command;
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const now = clock.now();
      const device = await findDevice(principal, deviceId);
      checkCommandRequest(body, device, principal, now);
      const strategy = device.power_save_strategy as PowerSaveStrategy;
      // LOCAL_WAKEUP devices in deep sleep wake only on a physical interaction (spec: Device).
      if (strategy === "LOCAL_WAKEUP" && device.sleep_state === "DEEP_SLEEP" && !isCloudOnlyCommand(name)) {
        throw new AppError(
          "ERRORS.DEVICE_ASLEEP",
          "The device is in deep sleep and wakes only on a physical interaction",
        );
      }
      if (isLockOrUnlock(name) && device.last_lock_command_at) {
        const wait =
          Date.parse(device.last_lock_command_at) + throttleWindowMs(timeouts, strategy) - now.getTime();
        if (wait > 0) {
          throw new AppError(
            "ERRORS.LOCK_COMMAND_THROTTLED",
            `Another lock or unlock was sent to this device less than ${throttleWindowMs(timeouts, strategy) / 1000} s ago`,
            {},
            { "retry-after": String(Math.ceil(wait / 1000)) },
          );
        }
      }
      if (name === "cancel-booking" && device.booked_by !== null && device.booked_by !== principal.id) {
        throw new AppError(
          "ERRORS.FORBIDDEN",
          "The booking belongs to another user; use force-cancel-booking",
        );
      }
      const t = timeoutsFor(timeouts, strategy);
      const bookingUntil = body.timeout_at ? new Date(body.timeout_at).toISOString() : undefined;
      const family = familyOf(device.type as DeviceType);
      const tr = transitionDevice(
        family,
        deviceStateOf(device),
        { kind: "command", name, bookingUntil },
        now,
        t,
      );
      if (tr.refused)
        throw new AppError("ERRORS.COMMAND_NOT_ALLOWED_IN_STATE", tr.message, { state: device.state_value });

      const id = randomUUID();
      const ts = now.toISOString();
      const events: CommandEvent[] = [{ name: "REQUEST_INITIATED", timestamp: ts }];
      let state = initialCommandState(now, t);
      if (isCloudOnlyCommand(name)) {
        // Bookings are the cloud's own records: they settle at once (docs/decisions.md).
        state = { value: "SUCCESS", reason: "", timeout_at: null };
        events.push({ name: successEventFor(name), timestamp: ts });
      }
      const deviceSet: Partial<DevicesTable> = {
        version: device.version + 1,
        updated_at: ts,
        ...(tr.changed ? stateColumns(tr.state) : {}),
      };
      if (drivesDeviceState(name)) deviceSet.command_id = id;
      else if (tr.changed) deviceSet.command_id = null;
      if (isLockOrUnlock(name)) deviceSet.last_lock_command_at = ts;
      if (name === "lock") deviceSet.user_id = body.user_id ?? null;
      if (name === "book") deviceSet.booked_by = principal.id;
      if (tr.changed && tr.state.value === "UNLOCKED") {
        deviceSet.booked_by = null;
        deviceSet.user_id = null;
      }
      const written = await db.transaction().execute(async (trx) => {
        const res = await trx
          .updateTable("devices")
          .set(deviceSet)
          .where("id", "=", device.id)
          .where("version", "=", device.version)
          .executeTakeFirst();
        if (res.numUpdatedRows === 0n) return false;
        if (name.startsWith("force-") && device.command_id) {
          // A force command takes over: the command it interrupts ends now, not at its deadline.
          await advanceCommand(
            trx,
            device.command_id,
            { kind: "failed", reason: `superseded by ${name}` },
            now,
            t,
            (s) => [{ name: "RESPONSE_ERROR", value: s.reason, timestamp: ts }],
          );
        }
        await trx
          .insertInto("commands")
          .values({
            id,
            operator_id: principal.operatorId,
            device_id: device.id,
            name,
            state_value: state.value,
            state_reason: state.reason,
            state_timeout_at: state.timeout_at,
            params: JSON.stringify(body),
            requested_by: principal.id,
            events: JSON.stringify(events),
            created_at: ts,
            updated_at: ts,
          })
          .execute();
        return true;
      });
      if (written) return { id, device, expiresAt: state.timeout_at };
      // Another request changed the device between our read and write: decide again on fresh data.
    }
    throw new AppError(
      "ERRORS.SERVICE_UNAVAILABLE",
      "The device is busy; try again",
      {},
      { "retry-after": "1" },
    );
  }

  async function fail(commandId: string, deviceId: string, reason: string): Promise<void> {
    const now = clock.now();
    const ts = now.toISOString();
    await db.transaction().execute(async (trx) => {
      const row = await advanceCommand(trx, commandId, { kind: "failed", reason }, now, timeouts, () => [
        { name: "RESPONSE_ERROR", value: reason, timestamp: ts },
      ]);
      if (row) await advanceDevice(trx, deviceId, commandId, { kind: "failed" }, now, timeouts);
    });
  }

  /** Hands the command to the device's gateway; SENT once the broker has it. */
  async function dispatch(
    commandId: string,
    device: DevicesTable,
    body: CommandRequest,
    expiresAt: string | null,
  ) {
    if (!device.gateway_id) {
      await fail(commandId, device.id, "device offline: it is not connected to a gateway");
      return;
    }
    const issued = clock.now();
    const sent = gateways
      .publishCommand(device.gateway_id, {
        command_id: commandId,
        device_id: device.id,
        name: body.command,
        params: { power_cycle: body.power_cycle, reason: body.reason, comment: body.comment },
        issued_at: issued.toISOString(),
        expires_at: expiresAt ?? issued.toISOString(),
      })
      .then(async () => {
        const now = clock.now();
        await advanceCommand(db, commandId, { kind: "dispatched" }, now, timeouts, () => [
          { name: "REQUEST_SENT", timestamp: now.toISOString() },
        ]);
      })
      .catch((err: unknown) => log.warn({ err, command_id: commandId }, "command not handed to the broker"));
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([sent, new Promise<void>((r) => (timer = setTimeout(r, publishWaitMs)))]);
    clearTimeout(timer);
  }

  return {
    async create(principal: Principal, deviceId: string, body: CommandRequest): Promise<Command> {
      const { id, device, expiresAt } = await accept(principal, deviceId, body);
      if (!isCloudOnlyCommand(body.command)) await dispatch(id, device, body, expiresAt);
      return this.get(principal, id);
    },

    async get(principal: Principal, id: string): Promise<Command> {
      const row = await db
        .selectFrom("commands")
        .selectAll()
        .where("id", "=", id)
        .where("operator_id", "=", principal.operatorId)
        .executeTakeFirst();
      if (!row) throw new AppError("ERRORS.NOT_FOUND", `Command ${id} not found`);
      return presentCommand(row);
    },
  };
}

export type CommandService = ReturnType<typeof createCommandService>;
