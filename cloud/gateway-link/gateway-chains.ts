import type { Logger } from "pino";
import type { GatewayMessageKind, GatewayRefusal } from "../metrics.ts";

/** How much of one gateway's messages may wait, received and not yet applied (count and bytes). */
export type BacklogLimit = { messages: number; bytes: number };

/**
 * One gateway's messages are applied in arrival order; different gateways proceed in parallel. Beside
 * other replicas of a share group that order is not the gateway's: what depends on it checks seq. What
 * arrives beyond a gateway's backlog limit is dropped and counted, unacknowledged, so the gateway sends it
 * again later.
 */
export function createGatewayChains(deps: {
  limit: BacklogLimit;
  log: Logger;
  refused: (type: GatewayMessageKind, reason: GatewayRefusal) => void;
  /** Applies one message; its gateway's next waits for it. */
  apply: (topic: string, raw: Buffer) => Promise<void> | void;
  /** Told after each message of a gateway has been applied, in order. */
  onApplied?: (gatewayId: string, channel: string) => void;
}) {
  const { limit, log } = deps;
  const chains = new Map<string, Promise<void>>();
  /** What each gateway's chain holds, received and not yet applied. */
  const backlog = new Map<string, BacklogLimit>();

  return {
    /** Queues a message behind its gateway's earlier ones (`t` is its parsed topic, if it parsed). */
    accept(topic: string, raw: Buffer, t: { gatewayId: string; channel: string } | null): void {
      const gatewayId = t?.gatewayId ?? "";
      const held = backlog.get(gatewayId) ?? { messages: 0, bytes: 0 };
      if (held.messages + 1 > limit.messages || held.bytes + raw.length > limit.bytes) {
        // Not acknowledged: a report goes out again from the gateway's outbox once it has caught up.
        deps.refused((t?.channel ?? "up") as GatewayMessageKind, "backlog");
        log.debug({ gateway_id: gatewayId, backlog: held.messages }, "gateway backlog full: message dropped");
        return;
      }
      held.messages += 1;
      held.bytes += raw.length;
      backlog.set(gatewayId, held);
      const next = (chains.get(gatewayId) ?? Promise.resolve())
        .then(() => deps.apply(topic, raw))
        .then(() => deps.onApplied?.(gatewayId, t?.channel ?? ""))
        .catch((err: unknown) => log.error({ err, topic }, "failed to apply a gateway message"))
        .finally(() => {
          held.messages -= 1;
          held.bytes -= raw.length;
          if (held.messages === 0) backlog.delete(gatewayId);
        });
      chains.set(gatewayId, next);
      void next.finally(() => {
        if (chains.get(gatewayId) === next) chains.delete(gatewayId);
      });
    },

    /** The chains under way, to wait for at close. */
    inFlight(): Promise<void>[] {
      return [...chains.values()];
    },
  };
}
