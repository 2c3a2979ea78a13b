import type { Logger } from "pino";
import type { GatewayMessageKind, GatewayRefusal } from "../metrics.ts";

/** How much of one gateway's messages may wait, received and not yet applied (count and bytes). */
export type BacklogLimit = { messages: number; bytes: number };

/**
 * What `apply` answers for a message it has handed on to be applied later (a device report queued for a
 * group commit): the gateway's next message may start at once, and this one counts as applied once
 * `applied` settles.
 */
export type HandedOn = { applied: Promise<void> };

/**
 * Applies one message, answering a promise (its gateway's next message waits for it), a `HandedOn`, or
 * nothing. `earlier` settles once every earlier message of its gateway has been applied: a message that
 * depends on them waits for it; one handed on need not, when whatever it is handed to keeps the gateway's
 * order itself.
 */
export type ApplyMessage = (topic: string, raw: Buffer, earlier: Promise<void>) => unknown;

const isHandedOn = (r: unknown): r is HandedOn =>
  typeof r === "object" && r !== null && (r as HandedOn).applied instanceof Promise;

type Chain = {
  /** Settles when the latest message has been applied or handed on: its gateway's next may start. */
  turn: Promise<void>;
  /** Settles when the latest message, and so every earlier one, has been applied. */
  applied: Promise<void>;
};

/**
 * One gateway's messages are applied in arrival order; different gateways proceed in parallel. A message
 * handed on lets the next one start before it is applied (a gateway's device reports join one batch instead
 * of one a batch), but is still told applied (`onApplied`) in order. Beside other replicas of a share group
 * that order is not the gateway's: what depends on it checks seq. What arrives beyond a gateway's backlog
 * limit is dropped and counted, unacknowledged, so the gateway sends it again later.
 */
export function createGatewayChains(deps: {
  limit: BacklogLimit;
  log: Logger;
  refused: (type: GatewayMessageKind, reason: GatewayRefusal) => void;
  apply: ApplyMessage;
  /** Told after each message of a gateway has been applied, in order. */
  onApplied?: (gatewayId: string, channel: string) => void;
  /** True once the cloud is stopping: what fails then (its answer cannot be published) is expected. */
  stopping?: () => boolean;
}) {
  const { limit, log } = deps;
  const chains = new Map<string, Chain>();
  /** What each gateway's chain holds, received and not yet applied. */
  const backlog = new Map<string, BacklogLimit>();
  const done = Promise.resolve();

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
      const prev = chains.get(gatewayId) ?? { turn: done, applied: done };
      // A message that arrives while the cloud stops may not be answered (the MQTT client is ending): its
      // gateway sends it again (outbox) or announces itself again (retained status) to the next process.
      const failed = (err: unknown) =>
        deps.stopping?.()
          ? log.info({ err: (err as Error).message, topic }, "a gateway message left to the next start")
          : log.error({ err, topic }, "failed to apply a gateway message");
      const started = prev.turn.then(() => deps.apply(topic, raw, prev.applied));
      // Whether it was applied, never a rejection: it may settle long before the earlier ones.
      const own = started
        .then((r) => (isHandedOn(r) ? r.applied : undefined))
        .then(
          () => true,
          (err: unknown) => {
            failed(err);
            return false;
          },
        );
      const applied = Promise.all([prev.applied, own])
        .then(([, ok]) => {
          if (ok) deps.onApplied?.(gatewayId, t?.channel ?? "");
        })
        .catch(failed)
        .finally(() => {
          held.messages -= 1;
          held.bytes -= raw.length;
          if (held.messages === 0) backlog.delete(gatewayId);
        });
      const next: Chain = {
        turn: started.then(
          () => undefined,
          () => undefined,
        ),
        applied,
      };
      chains.set(gatewayId, next);
      void applied.finally(() => {
        if (chains.get(gatewayId) === next) chains.delete(gatewayId);
      });
    },

    /** The chains under way, to wait for at close. */
    inFlight(): Promise<void>[] {
      return [...chains.values()].map((c) => c.applied);
    },
  };
}
