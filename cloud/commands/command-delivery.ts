import type { Logger } from "pino";
import type { Clock } from "../../shared/time/clock.ts";
import type { CommandRequest as WireCommand } from "../../shared/wire/messages.ts";
import type { CommandTimeoutConfig } from "../devices/timeouts.ts";
import type { GatewayPublisher } from "../ports.ts";
import type { CommandRecord } from "../store/command-record.ts";
import type { Db } from "../store/db.ts";
import { advanceCommand } from "./advance-command.ts";
import { commandRepository } from "./command-repository.ts";

type Deps = { clock: Clock; timeouts: CommandTimeoutConfig };
type DeliveryDeps = Deps & { db: Db; gateways: GatewayPublisher };

/**
 * Publishes a command to its gateway; once the broker has it the command is SENT (REQUEST_SENT). `known`:
 * the command as its acceptance wrote it, so it need not be read again (unless the gateway's report came
 * first, which a lost compare-and-set finds).
 */
export async function publishCommand(
  deps: DeliveryDeps,
  gatewayId: string,
  wire: WireCommand,
  known?: CommandRecord,
): Promise<void> {
  await deps.gateways.publishCommand(gatewayId, wire);
  const now = deps.clock.now();
  await advanceCommand(deps.db, {
    commandId: wire.command_id,
    known,
    input: { kind: "dispatched" },
    now,
    cfg: deps.timeouts,
    events: () => [{ name: "REQUEST_SENT", timestamp: now.toISOString() }],
  });
}

/**
 * Publishes again, in the order they were made, every command of a gateway that it has not taken yet
 * and whose delivery deadline has not passed — called when the gateway comes (back) online. A broker
 * that restarted without persistence, or a gateway that had not subscribed again, may have dropped
 * them; the gateway takes a command id only once, so a repeat is harmless. Past its deadline a command
 * is never sent: the deadline sweep ends it in ERROR (and the gateway would refuse it anyway).
 */
export async function redeliverPending(
  db: Db,
  gateways: GatewayPublisher,
  gatewayId: string,
  deps: Deps & { log: Logger },
): Promise<number> {
  const pending = await commandRepository(db).awaitingDelivery(gatewayId, deps.clock.now());
  for (const wire of pending) {
    await publishCommand({ ...deps, db, gateways }, gatewayId, wire).catch((err: unknown) =>
      deps.log.warn({ err, command_id: wire.command_id }, "command not handed to the broker again"),
    );
  }
  if (pending.length)
    deps.log.info({ gateway_id: gatewayId, commands: pending.length }, "commands delivered again");
  return pending.length;
}
