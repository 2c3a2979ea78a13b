import type { Logger } from "pino";
import type { Clock } from "../../shared/clock.ts";
import type { CommandRequest as WireCommand } from "../../shared/wire/messages.ts";
import type { GatewayPublisher } from "../ports.ts";
import type { Db } from "../store/db.ts";
import { advanceCommand } from "./command-store.ts";
import type { CommandTimeoutConfig } from "./timeouts.ts";

type Deps = { clock: Clock; timeouts: CommandTimeoutConfig };

/** Publishes a command to its gateway; once the broker has it the command is SENT (REQUEST_SENT). */
export async function publishCommand(
  db: Db,
  gateways: GatewayPublisher,
  gatewayId: string,
  wire: WireCommand,
  { clock, timeouts }: Deps,
): Promise<void> {
  await gateways.publishCommand(gatewayId, wire);
  const now = clock.now();
  await advanceCommand(db, wire.command_id, { kind: "dispatched" }, now, timeouts, () => [
    { name: "REQUEST_SENT", timestamp: now.toISOString() },
  ]);
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
  const rows = await db
    .selectFrom("commands")
    .innerJoin("devices", "devices.id", "commands.device_id")
    .select(["commands.id", "commands.wire_request"])
    .where("devices.gateway_id", "=", gatewayId)
    .where("commands.state_value", "in", ["NOT_SENT", "SENT"])
    .where("commands.state_timeout_at", ">", deps.clock.now().toISOString())
    .where("commands.wire_request", "is not", null)
    .orderBy("commands.created_at")
    .orderBy("commands.id")
    .execute();
  for (const row of rows) {
    const wire = JSON.parse(row.wire_request as string) as WireCommand;
    await publishCommand(db, gateways, gatewayId, wire, deps).catch((err: unknown) =>
      deps.log.warn({ err, command_id: row.id }, "command not handed to the broker again"),
    );
  }
  if (rows.length)
    deps.log.info({ gateway_id: gatewayId, commands: rows.length }, "commands delivered again");
  return rows.length;
}
