import type {
  BoardReachability,
  BrokerLink,
  Clock,
  DeviceDirectory,
  OutboxPosition,
  TimerHandle,
} from "../ports.ts";

/**
 * Heartbeats (flow 3): the gateway and every device it can reach, at a fixed interval, QoS 0 and never
 * queued. A device on a board that answered its last ping is reachable; a GPIO-wired door is reachable
 * while the gateway runs. With the outbox, each also tells the cloud which seqs it will never send again.
 */
export function createHeartbeat(o: {
  gatewayId: string;
  broker: Pick<BrokerLink, "publishHeartbeat" | "on" | "off">;
  registry: DeviceDirectory;
  monitors: BoardReachability[];
  clock: Clock;
  intervalMs: number;
  outbox?: OutboxPosition;
}) {
  let timer: TimerHandle | null = null;

  function reachable(board: number | undefined): boolean {
    if (board === undefined) return true;
    return o.monitors.some((m) => m.isReachable(board));
  }

  function beat(): boolean {
    return o.broker.publishHeartbeat({
      gateway_id: o.gatewayId,
      sent_at: o.clock.now().toISOString(),
      devices: o.registry
        .all()
        .filter((d) => d.type !== "GUARD")
        .map((d) => ({ device_id: d.device_id, reachable: reachable(d.bus?.board) })),
      ...(o.outbox ? { outbox: { id: o.outbox.id, unconfirmed_from: o.outbox.unconfirmedFrom() } } : {}),
    });
  }

  return {
    beat,
    start() {
      const tick = () => {
        timer = o.clock.setTimer(o.intervalMs, () => {
          beat();
          tick();
        });
      };
      o.broker.on("connected", beat);
      tick();
    },
    stop() {
      o.broker.off("connected", beat);
      if (timer) o.clock.clearTimer(timer);
      timer = null;
    },
  };
}
