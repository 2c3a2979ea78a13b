import { randomUUID } from "node:crypto";
import type { Logger } from "pino";
import type { Command, CommandRequest } from "../../shared/api/command.ts";
import { AppError } from "../../shared/api/errors.ts";
import type { CommandName } from "../../shared/domain/device-types.ts";
import type { Clock, TimerHandle } from "../../shared/time/clock.ts";
import type { CommandRequest as WireCommand } from "../../shared/wire/messages.ts";
import { type AuditOrigin, fieldChanges, recordAudit, requestOrigin } from "../audit/audit-log.ts";
import type { Principal } from "../auth/principal.ts";
import { deviceRepository } from "../devices/device-repository.ts";
import type { CommandTimeoutConfig } from "../devices/timeouts.ts";
import type { CommandSettledNotifier, GatewayPublisher } from "../ports.ts";
import { openSessionFor } from "../sessions/session-recorder.ts";
import type { CommandRecord } from "../store/command-record.ts";
import type { Db } from "../store/db.ts";
import type { DeviceRecord } from "../store/device-record.ts";
import { advanceCommand } from "./advance-command.ts";
import { awaitSettled, type CommandWait } from "./await-settled.ts";
import { readCallerFacts } from "./caller-facts.ts";
import { publishCommand } from "./command-delivery.ts";
import { commandRepository } from "./command-repository.ts";
import { type CommandAcceptance, decideCommand } from "./decide-command.ts";
import { endCommand } from "./end-command.ts";
import { presentCommand } from "./present-command.ts";

export type CommandServiceDeps = {
  db: Db;
  clock: Clock;
  gateways: GatewayPublisher;
  timeouts: CommandTimeoutConfig;
  log: Logger;
  /** How long POST waits for the broker's acknowledgement before answering (the send goes on after). */
  publishWaitMs?: number;
  /** Told of the commands this service ends; `Prefer: wait` listens to it. */
  settled: CommandSettledNotifier;
  /** How often a `Prefer: wait` reads its command for endings other replicas wrote (default 250 ms). */
  waitPollMs?: number;
};

const MAX_ATTEMPTS = 5;

/** The operator functions the audit log records when accepted (docs/decisions/audit.md). */
const AUDITED_COMMANDS: ReadonlySet<CommandName> = new Set([
  "force-unlock",
  "force-lock",
  "force-cancel-booking",
  "sync-device",
]);

/** What an accepted command changes on the device, field by field (its state by value). */
function deviceChangesOf(device: DeviceRecord, accepted: CommandAcceptance) {
  const { state, ...rest } = accepted.device;
  const fields = ["command_id", "user_id", "booked_by"] as const;
  const before: Record<string, unknown> = { state: device.state.value };
  for (const f of fields) before[f] = device[f];
  const after: Record<string, unknown> = { ...before };
  if (state) after.state = state.value;
  for (const f of fields) if (rest[f] !== undefined) after[f] = rest[f];
  return fieldChanges(before, after, ["state", ...fields]);
}

export function createCommandService(deps: CommandServiceDeps) {
  const { db, clock, gateways, timeouts, log } = deps;
  const publishWaitMs = deps.publishWaitMs ?? 2_000;
  const waiting = { clock, settled: deps.settled, pollMs: deps.waitPollMs ?? 250 };
  const devices = deviceRepository(db);
  const commands = commandRepository(db);

  /** Read → decide → write; a lost race decides again on what is there now. */
  async function accept(principal: Principal, deviceId: string, body: CommandRequest, origin: AuditOrigin) {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const now = clock.now();
      const device = await devices.findForOperator(principal.operatorId, deviceId);
      if (!device) throw new AppError("ERRORS.NOT_FOUND", `Device ${deviceId} not found`);
      const caller = await readCallerFacts(db, principal, device, body, now);
      const decision = decideCommand(device, principal, caller, { id: randomUUID(), body }, now, timeouts);
      if (!decision.accepted) {
        const { code, message, context, headers } = decision.refusal;
        throw new AppError(code, message, context, headers);
      }
      if (await write(principal, device, decision, now, origin)) {
        if (decision.supersedes) deps.settled.notify(decision.supersedes.id);
        return { device, command: decision.command };
      }
    }
    throw new AppError(
      "ERRORS.SERVICE_UNAVAILABLE",
      "The device is busy; try again",
      {},
      { "retry-after": "1" },
    );
  }

  /**
   * One transaction: the device (only if nobody wrote it since it was read), the command it supersedes
   * (which ends now, not at its deadline), the new command and, for an operator function, its audit
   * entry. False when the device had changed.
   */
  function write(
    principal: Principal,
    device: DeviceRecord,
    accepted: CommandAcceptance,
    now: Date,
    origin: AuditOrigin,
  ): Promise<boolean> {
    return db.transaction().execute(async (trx) => {
      if (!(await deviceRepository(trx).compareAndSet(device, accepted.device, now))) return false;
      const superseded = accepted.supersedes;
      if (superseded) {
        await advanceCommand(trx, {
          commandId: superseded.id,
          input: { kind: "failed", reason: superseded.reason },
          now,
          cfg: timeouts,
          events: (s) => [{ name: "REQUEST_SUPERSEDED", value: s.reason, timestamp: now.toISOString() }],
        });
      }
      await commandRepository(trx).insert(accepted.command);
      // A rider's lock or book opens (or continues) a session, within max_user_sessions.
      await openSessionFor(trx, { principal, device, command: accepted.command, now });
      const { name, params } = accepted.command;
      if (AUDITED_COMMANDS.has(name)) {
        const done = {
          operatorId: device.operator_id,
          action: `command.${name}`,
          subject: { type: "device", id: device.id },
          reason: params.reason ?? null,
          comment: params.comment ?? null,
          changes: deviceChangesOf(device, accepted),
        };
        await recordAudit(trx, origin, done, now);
      }
      return true;
    });
  }

  /** Hands the command to the device's gateway; SENT once the broker has it. */
  async function dispatch(device: DeviceRecord, wire: WireCommand, command: CommandRecord) {
    if (!device.gateway_id) {
      const reason = "device offline: it is not connected to a gateway";
      const now = clock.now();
      const ended = await endCommand(db, {
        commandId: wire.command_id,
        input: { kind: "failed", reason },
        now,
        cfg: timeouts,
        events: () => [{ name: "RESPONSE_ERROR", value: reason, timestamp: now.toISOString() }],
      });
      if (ended) deps.settled.notify(wire.command_id);
      return;
    }
    const sent = publishCommand({ db, gateways, clock, timeouts }, device.gateway_id, wire, command).catch(
      (err: unknown) => log.warn({ err, command_id: wire.command_id }, "command not handed to the broker"),
    );
    let timer: TimerHandle | undefined;
    await Promise.race([sent, new Promise<void>((r) => (timer = clock.setTimer(publishWaitMs, r)))]);
    if (timer) clock.clearTimer(timer);
  }

  async function read(principal: Principal, id: string) {
    const command = await commands.findForOperator(principal.operatorId, id);
    // A rider sees only the commands they sent; another's is "not found" like another tenant's.
    const hidden = principal.kind === "user" && command?.requested_by !== principal.id;
    if (!command || hidden) throw new AppError("ERRORS.NOT_FOUND", `Command ${id} not found`);
    return command;
  }

  return {
    /**
     * With `wait`, answers once the command has ended or the wait, counted from this call, is over.
     * `origin` names who acts for the audit log (by default the principal, with no request).
     */
    async create(
      principal: Principal,
      deviceId: string,
      body: CommandRequest,
      wait?: CommandWait,
      origin: AuditOrigin = requestOrigin(principal),
    ): Promise<Command> {
      const startedMs = clock.now().getTime();
      const { device, command } = await accept(principal, deviceId, body, origin);
      if (command.wire_request) await dispatch(device, command.wire_request, command);
      const left = wait && { ...wait, ms: wait.ms - (clock.now().getTime() - startedMs) };
      return this.get(principal, command.id, left);
    },

    /** With `wait`, answers once the command has ended or the wait is over (`Prefer: wait`). */
    async get(principal: Principal, id: string, wait?: CommandWait): Promise<Command> {
      const current = () => read(principal, id);
      return presentCommand(await (wait ? awaitSettled(waiting, id, current, wait) : current()));
    },
  };
}

export type CommandService = ReturnType<typeof createCommandService>;
