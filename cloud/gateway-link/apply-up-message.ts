import type { Logger } from "pino";
import type { UpMessage } from "../../shared/wire/messages.ts";
import type { CommandTimeoutConfig } from "../devices/timeouts.ts";
import { applyAccessDecision } from "../key-sync/access-events.ts";
import type { GatewayRefusal } from "../metrics.ts";
import { applyPhotoPart } from "../photos/apply-photo-part.ts";
import type { CommandSettledNotifier } from "../ports.ts";
import type { CommandRecord } from "../store/command-record.ts";
import type { Db } from "../store/db.ts";
import { applyCommandProgress } from "./command-progress.ts";
import { gatewayOutboxRepository } from "./gateway-outbox-repository.ts";
import { applyDeviceState, applyHardwareEvent } from "./gateway-reports.ts";

/**
 * Applies one outbox message from a gateway exactly once: the (gateway_id, outbox_id, seq) row and the
 * message's effects commit together, so a redelivery after a lost ack changes nothing (F4, F6), while a
 * gateway whose store was made again (seq from 1, another outbox id) is heard. A message naming no outbox
 * dedups as ''. A command's outcome is told to `settled` once committed, with the command as it committed it
 * (a request waiting on it answers with that, without reading it again); what was refused of the message
 * (S30: a device or command of another gateway) is told to `refused` once committed.
 */
export async function applyUpMessage(
  db: Db,
  gatewayId: string,
  msg: UpMessage,
  deps: {
    now: Date;
    timeouts: CommandTimeoutConfig;
    log: Logger;
    settled?: CommandSettledNotifier;
    refused?: (type: UpMessage["type"], reason: GatewayRefusal) => void;
  },
): Promise<"applied" | "duplicate"> {
  const reasons: GatewayRefusal[] = [];
  let ended: CommandRecord | undefined;
  const result = await applyInTransaction(db, gatewayId, msg, {
    ...deps,
    refuse: (r) => reasons.push(r),
    ended: (c) => (ended = c),
  });
  for (const r of reasons) deps.refused?.(msg.type, r);
  if (result === "applied" && msg.type === "command_progress" && msg.state !== "RECEIVED")
    deps.settled?.notify(msg.command_id, ended);
  return result;
}

function applyInTransaction(
  db: Db,
  gatewayId: string,
  msg: UpMessage,
  deps: {
    now: Date;
    timeouts: CommandTimeoutConfig;
    log: Logger;
    refuse: (reason: GatewayRefusal) => void;
    ended: (command: CommandRecord) => void;
  },
): Promise<"applied" | "duplicate"> {
  return db.transaction().execute(async (trx) => {
    const applied = gatewayOutboxRepository(trx);
    if (!(await applied.markApplied(gatewayId, msg.outbox_id ?? "", msg.seq, deps.now.toISOString())))
      return "duplicate";
    const report = { gatewayId, cfg: deps.timeouts, now: deps.now, log: deps.log, refuse: deps.refuse };
    switch (msg.type) {
      case "command_progress":
        await applyCommandProgress(trx, { ...report, msg, ended: deps.ended });
        break;
      case "device_state":
        await applyDeviceState(trx, { ...report, msg });
        break;
      case "hardware_event":
        await applyHardwareEvent(trx, { ...report, msg });
        break;
      case "access_decision":
        await applyAccessDecision(trx, { ...report, msg });
        break;
      case "photo":
        await applyPhotoPart(trx, { ...report, msg });
        break;
    }
    return "applied";
  });
}
