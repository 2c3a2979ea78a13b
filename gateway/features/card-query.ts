import { randomUuid } from "../../shared/node/random-uuid.ts";
import type { Grant, KeysDown } from "../../shared/wire/messages.ts";
import type { BrokerLink, Clock, TimerHandle } from "../ports.ts";

/**
 * Asks the cloud about a card the key cache does not hold (ARCHITECTURE flow 2, step 6): a `query` on
 * `keys_report`, answered on `keys` with the card's grants at this location. Only while connected, and
 * only for a short deadline on the injected clock: a person is waiting at the reader.
 */
export function createCardQueries(deps: {
  gatewayId: string;
  broker: Pick<BrokerLink, "connected" | "publishKeysReport" | "on" | "off">;
  clock: Clock;
  timeoutMs: number;
  newId?: () => string;
}) {
  const newId = deps.newId ?? randomUuid;
  /** Open questions by query id: the card asked about, and how to end the wait. */
  const waiting = new Map<string, { card: string; end: (grants: Grant[] | null) => void }>();

  const onKeys = (msg: KeysDown) => {
    if (msg.kind !== "answer") return;
    const w = waiting.get(msg.query_id);
    // A late answer (its tap was refused meanwhile) or one about another card is dropped.
    if (!w || w.card !== msg.card_id) return;
    w.end(msg.grants.filter((g) => g.card_id === msg.card_id));
  };
  /** Gone offline: nobody will answer, so the taps waiting are decided now. */
  const giveUpAll = () => {
    for (const w of [...waiting.values()]) w.end(null);
  };

  return {
    /** The card's grants as the cloud knows them; null when offline or when no answer came in time. */
    askCloud(card: string, deviceId: string | null): Promise<Grant[] | null> {
      if (!deps.broker.connected) return Promise.resolve(null);
      const queryId = newId();
      return new Promise((resolve) => {
        let timer: TimerHandle | null = null;
        const end = (grants: Grant[] | null) => {
          if (!waiting.delete(queryId)) return;
          if (timer) deps.clock.clearTimer(timer);
          resolve(grants);
        };
        waiting.set(queryId, { card, end });
        timer = deps.clock.setTimer(deps.timeoutMs, () => end(null));
        const sent = deps.broker.publishKeysReport({
          kind: "query",
          gateway_id: deps.gatewayId,
          query_id: queryId,
          card_id: card,
          device_id: deviceId,
        });
        if (!sent) end(null);
      });
    },
    start(): void {
      deps.broker.on("keys", onKeys);
      deps.broker.on("disconnected", giveUpAll);
    },
    stop(): void {
      deps.broker.off("keys", onKeys);
      deps.broker.off("disconnected", giveUpAll);
      giveUpAll();
    },
  };
}

export type CardQueries = ReturnType<typeof createCardQueries>;
