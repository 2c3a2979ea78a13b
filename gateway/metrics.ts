import type http from "node:http";
// prom-client's parts rather than its index, which also loads its Pushgateway (https, hence OpenSSL) and
// cluster aggregator: ~5 MB of the daemon's resident memory for code it never runs (README: gateway
// footprint). gateway/prom-client-parts.d.ts types them.
import Counter from "prom-client/lib/counter.js";
import Gauge from "prom-client/lib/gauge.js";
import Registry from "prom-client/lib/registry.js";

/**
 * Prometheus metrics of the daemon (U23): bounded labels only (bus, board, reader, command name,
 * result, access decision reason). Node's default metrics join them when they are served (serveMetrics).
 */
export function createMetrics(prefix = "parking_gateway_") {
  const registry = new Registry();
  const m = {
    registry,
    prefix,
    commands: new Counter({
      name: `${prefix}commands_total`,
      help: "Commands executed",
      labelNames: ["name", "result"],
      registers: [registry],
    }),
    taps: new Counter({
      name: `${prefix}rfid_taps_total`,
      help: "Card taps read",
      labelNames: ["reader"],
      registers: [registry],
    }),
    /** reason is one of the decision's fixed words (shared/domain/access-decision.ts): bounded. */
    accessDecisions: new Counter({
      name: `${prefix}access_decisions_total`,
      help: "Card taps decided, by outcome and reason",
      labelNames: ["granted", "reason", "decided_by"],
      registers: [registry],
    }),
    keysVersion: new Gauge({
      name: `${prefix}keys_version`,
      help: "The cloud's whitelist key version the local cache holds",
      registers: [registry],
    }),
    discarded: new Counter({
      name: `${prefix}bus_discarded_bytes_total`,
      help: "Bytes the lock-bus parser discarded",
      labelNames: ["bus"],
      registers: [registry],
    }),
    outboxPending: new Gauge({
      name: `${prefix}outbox_pending`,
      help: "Outbox rows not yet confirmed by the cloud",
      registers: [registry],
    }),
    outboxOldestAge: new Gauge({
      name: `${prefix}outbox_oldest_age_seconds`,
      help: "Age of the oldest unconfirmed outbox row",
      registers: [registry],
    }),
    brokerConnected: new Gauge({
      name: `${prefix}broker_connected`,
      help: "1 while connected to the broker",
      registers: [registry],
    }),
    busOpen: new Gauge({
      name: `${prefix}bus_open`,
      help: "1 while the serial bus is open",
      labelNames: ["bus"],
      registers: [registry],
    }),
    boardReachable: new Gauge({
      name: `${prefix}board_reachable`,
      help: "1 while the lock board answers",
      labelNames: ["bus", "board"],
      registers: [registry],
    }),
    readerOpen: new Gauge({
      name: `${prefix}reader_open`,
      help: "1 while the RFID reader's line is open",
      labelNames: ["reader"],
      registers: [registry],
    }),
  };
  return m;
}

export type Metrics = ReturnType<typeof createMetrics>;

/**
 * Serves /metrics; `refresh` updates the gauges that are read from state rather than counted. node:http and
 * Node's default metrics (event-loop lag, GC, heap, handles: their modules, the event-loop delay histogram
 * and the GC observer) are loaded here, so a daemon without a metrics port does without them, as nothing
 * could read them (docs/decisions/gateway-memory.md).
 */
export async function serveMetrics(
  metrics: Metrics,
  host: string,
  port: number,
  refresh: () => void,
): Promise<http.Server> {
  const [{ createServer }, { default: collectDefaultMetrics }] = await Promise.all([
    import("node:http"),
    import("prom-client/lib/defaultMetrics.js"),
  ]);
  collectDefaultMetrics({ register: metrics.registry, prefix: metrics.prefix });
  const server = createServer((req, res) => {
    if (req.url !== "/metrics") {
      res.writeHead(404).end();
      return;
    }
    refresh();
    metrics.registry
      .metrics()
      .then((body) => res.writeHead(200, { "content-type": metrics.registry.contentType }).end(body))
      .catch(() => res.writeHead(500).end());
  });
  // A port already taken fails the start (the error names metrics.port) instead of crashing the process.
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  return server;
}
