import type { Logger } from "pino";
import type { GatewayConfig } from "../../config.ts";
import { LockBusClient } from "../../lock-bus/lock-bus-client.ts";
import type { Clock, SerialLinkFactory } from "../../ports.ts";
import { BusMonitor } from "./bus-monitor.ts";

/** One lock bus of the config: its client, and the monitor that polls its boards every heartbeat interval. */
export type LockBus = { cfg: GatewayConfig["buses"][number]; client: LockBusClient; monitor: BusMonitor };

export function createLockBuses(
  buses: GatewayConfig["buses"],
  deps: { openLink: SerialLinkFactory; clock: Clock; log: Logger; pollMs: number },
): LockBus[] {
  const { openLink, clock, log } = deps;
  return buses.map((b) => {
    const client = new LockBusClient({
      name: b.name,
      path: b.path,
      baudRate: b.baud_rate,
      ackTimeoutMs: b.ack_timeout_ms,
      replyTimeoutMs: b.reply_timeout_ms,
      openLink,
      clock,
      log,
    });
    const monitor = new BusMonitor(client, b.boards, { clock, log, pollMs: deps.pollMs });
    return { cfg: b, client, monitor };
  });
}

/** The client of the bus a device's board is on; null for a device wired otherwise (GPIO) or nowhere. */
export const busOf =
  (buses: readonly LockBus[]) =>
  (device: { bus: { board: number } | null }): LockBusClient | null =>
    buses.find((b) => device.bus && b.cfg.boards.includes(device.bus.board))?.client ?? null;
