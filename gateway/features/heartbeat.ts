import type { Heartbeat } from "../../shared/wire/messages.ts";
import type {
  BoardReachability,
  BrokerLink,
  Clock,
  DeviceDirectory,
  OutboxPosition,
  TimerHandle,
} from "../ports.ts";
import type { CloudClock } from "../time/cloud-clock.ts";
import type { StorageState } from "./store-full.ts";

/**
 * Heartbeats (flow 3): the gateway and every device it can reach, at a fixed interval, QoS 0 and never
 * queued. A device on a board that answered its last ping is reachable; a GPIO-wired door is reachable
 * while the gateway runs. With the outbox, each also tells the cloud which seqs it will never send again;
 * once the gateway has heard the cloud's time, how far its own wall clock is off it; how many rows its outbox
 * holds (kept by the outbox as it changes: a beat does not count them) and the daemon's version and start;
 * now and then a probe the cloud echoes, which bounds the cloud's time from above (docs/decisions/clock.md).
 */
export function createHeartbeat(deps: {
  gatewayId: string;
  broker: Pick<BrokerLink, "publishHeartbeat" | "on" | "off">;
  registry: DeviceDirectory;
  monitors: BoardReachability[];
  clock: Clock;
  intervalMs: number;
  outbox?: OutboxPosition;
  cloudTime?: Pick<CloudClock, "offsetMs" | "isSkewed" | "probe">;
  /** The state disk (store-full.ts): told in every beat, which a full store cannot journal. */
  storage?: () => StorageState;
  /** The daemon's package version and when it started (its clock at start), told in every beat. */
  runtime?: NonNullable<Heartbeat["runtime"]>;
}) {
  let timer: TimerHandle | null = null;

  function reachable(board: number | undefined): boolean {
    if (board === undefined) return true;
    return deps.monitors.some((m) => m.isReachable(board));
  }

  function beat(): boolean {
    const offset = deps.cloudTime?.offsetMs() ?? null;
    const storage = deps.storage?.();
    const sync = deps.cloudTime?.probe();
    return deps.broker.publishHeartbeat({
      gateway_id: deps.gatewayId,
      sent_at: deps.clock.now().toISOString(),
      devices: deps.registry
        .all()
        .filter((device) => device.type !== "GUARD")
        .map((device) => ({ device_id: device.device_id, reachable: reachable(device.bus?.board) })),
      ...(deps.outbox
        ? {
            outbox: {
              id: deps.outbox.id,
              unconfirmed_from: deps.outbox.unconfirmedFrom(),
              depth: deps.outbox.depth(),
            },
          }
        : {}),
      ...(offset === null
        ? {}
        : { clock: { offset_ms: Math.round(offset), skewed: deps.cloudTime?.isSkewed() ?? false } }),
      ...(storage ? { storage } : {}),
      ...(sync ? { sync } : {}),
      ...(deps.runtime ? { runtime: deps.runtime } : {}),
    });
  }

  return {
    beat,
    start() {
      const tick = () => {
        timer = deps.clock.setTimer(deps.intervalMs, () => {
          beat();
          tick();
        });
      };
      deps.broker.on("connected", beat);
      tick();
    },
    stop() {
      deps.broker.off("connected", beat);
      if (timer) deps.clock.clearTimer(timer);
      timer = null;
    },
  };
}
