import { randomUUID } from "node:crypto";
import type { Logger } from "pino";
import type { Command, CommandEvent, CommandRequest } from "../../shared/api/command.ts";
import type { Clock, TimerHandle } from "../../shared/clock.ts";
import { initialCommandState } from "../../shared/domain/command-machine.ts";
import { isInterim, transitionDevice } from "../../shared/domain/device-machine.ts";
import {
  type DeviceType,
  familyOf,
  isCloudOnlyCommand,
  isThrottled,
  type PowerSaveStrategy,
} from "../../shared/domain/device-types.ts";
import { AppError } from "../../shared/errors.ts";
import type { CommandRequest as WireCommand } from "../../shared/wire/messages.ts";
import type { Principal } from "../auth/principal.ts";
import { deviceStateOf, stateColumns } from "../devices/device-state.ts";
import type { GatewayPublisher } from "../ports.ts";
import type { Db } from "../store/db.ts";
import type { DevicesTable } from "../store/schema.ts";
import { publishCommand } from "./command-delivery.ts";
import { drivesDeviceState, successEventFor } from "./command-events.ts";
import { checkCommandRequest, checkDeviceAdmits } from "./command-rules.ts";
import { advanceCommand, advanceDevice } from "./command-store.ts";
import { presentCommand } from "./present-command.ts";
import { type CommandTimeoutConfig, timeoutsFor } from "./timeouts.ts";

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
      checkDeviceAdmits(name, device, principal, now, timeouts);
      const t = timeoutsFor(timeouts, device.power_save_strategy as PowerSaveStrategy);
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
      // A force command takes over the command in flight, on the gateway too (it names what it supersedes).
      const supersedes = drivesDeviceState(name) && device.command_id ? device.command_id : undefined;
      const wire: WireCommand | null = isCloudOnlyCommand(name)
        ? null
        : {
            command_id: id,
            device_id: device.id,
            name,
            params: { power_cycle: body.power_cycle, reason: body.reason, comment: body.comment },
            issued_at: ts,
            expires_at: state.timeout_at ?? ts,
            ...(supersedes ? { supersedes } : {}),
          };
      const deviceSet: Partial<DevicesTable> = {
        version: device.version + 1,
        updated_at: ts,
        ...(tr.changed ? stateColumns(tr.state) : {}),
      };
      if (drivesDeviceState(name)) deviceSet.command_id = id;
      else if (tr.changed && !isInterim(tr.state.value)) deviceSet.command_id = null;
      if (isThrottled(name)) deviceSet.last_lock_command_at = ts;
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
        if (supersedes) {
          // The command it interrupts ends now, not at its deadline.
          await advanceCommand(
            trx,
            supersedes,
            { kind: "failed", reason: `superseded by ${name}` },
            now,
            t,
            (s) => [{ name: "REQUEST_SUPERSEDED", value: s.reason, timestamp: ts }],
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
            wire_request: wire ? JSON.stringify(wire) : null,
            created_at: ts,
            updated_at: ts,
          })
          .execute();
        return true;
      });
      if (written) return { id, device, wire };
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
      if (row)
        await advanceDevice(trx, { deviceId, commandId, input: { kind: "failed" }, now, cfg: timeouts });
    });
  }

  /** Hands the command to the device's gateway; SENT once the broker has it. */
  async function dispatch(device: DevicesTable, wire: WireCommand) {
    if (!device.gateway_id) {
      await fail(wire.command_id, device.id, "device offline: it is not connected to a gateway");
      return;
    }
    const sent = publishCommand(db, gateways, device.gateway_id, wire, { clock, timeouts }).catch(
      (err: unknown) => log.warn({ err, command_id: wire.command_id }, "command not handed to the broker"),
    );
    let timer: TimerHandle | undefined;
    await Promise.race([sent, new Promise<void>((r) => (timer = clock.setTimer(publishWaitMs, r)))]);
    if (timer) clock.clearTimer(timer);
  }

  return {
    async create(principal: Principal, deviceId: string, body: CommandRequest): Promise<Command> {
      const { id, device, wire } = await accept(principal, deviceId, body);
      if (wire) await dispatch(device, wire);
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
