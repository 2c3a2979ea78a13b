import type { LockBus } from "../adapters/hardware/lock-buses.ts";
import type { Metrics } from "../metrics.ts";
import type { BrokerLink, Clock, KeyCache, Outbox } from "../ports.ts";
import type { CardReader } from "./card-readers.ts";

type Parts = {
  outbox: Pick<Outbox, "stats">;
  clock: Clock;
  broker: Pick<BrokerLink, "connected">;
  keys: Pick<KeyCache, "version">;
  buses: readonly LockBus[];
  readers: readonly CardReader[];
};

/** Counts the bytes each bus's parser throws away as they go (a counter, not read from state). */
export function countBusDiscards(metrics: Metrics, buses: readonly LockBus[]): void {
  for (const b of buses) b.client.on("discarded", (n) => metrics.discarded.inc({ bus: b.cfg.name }, n));
}

/** The gauges read from the parts' state, set again each time /metrics is scraped. */
export function gaugeRefresher(metrics: Metrics, parts: Parts): () => void {
  const { outbox, clock, broker, buses, readers } = parts;
  return () => {
    const s = outbox.stats();
    metrics.outboxPending.set(s.pending);
    metrics.outboxOldestAge.set(s.oldest ? (clock.now().getTime() - Date.parse(s.oldest)) / 1000 : 0);
    metrics.brokerConnected.set(broker.connected ? 1 : 0);
    metrics.keysVersion.set(parts.keys.version());
    for (const b of buses) {
      metrics.busOpen.set({ bus: b.cfg.name }, b.client.isOpen ? 1 : 0);
      for (const h of b.monitor.health())
        metrics.boardReachable.set({ bus: b.cfg.name, board: String(h.addr) }, h.reachable ? 1 : 0);
    }
    for (const r of readers) metrics.readerOpen.set({ reader: r.cfg.id }, r.port.isOpen ? 1 : 0);
  };
}
