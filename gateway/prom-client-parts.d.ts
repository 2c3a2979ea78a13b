/**
 * The parts of prom-client the daemon imports one by one (gateway/metrics.ts), typed as its index declares
 * them. The index itself also loads the Pushgateway (https, zlib) and the cluster aggregator.
 */
declare module "prom-client/lib/registry.js" {
  import type { Registry } from "prom-client";

  const RegistryClass: typeof Registry;
  export = RegistryClass;
}
declare module "prom-client/lib/counter.js" {
  import type { Counter } from "prom-client";

  const CounterClass: typeof Counter;
  export = CounterClass;
}
declare module "prom-client/lib/gauge.js" {
  import type { Gauge } from "prom-client";

  const GaugeClass: typeof Gauge;
  export = GaugeClass;
}
declare module "prom-client/lib/defaultMetrics.js" {
  import type { collectDefaultMetrics } from "prom-client";

  const collect: typeof collectDefaultMetrics;
  export = collect;
}
