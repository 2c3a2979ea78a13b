import type { Logger } from "pino";
import type { Clock } from "../shared/time/clock.ts";
import type { InProcessSettledNotifier } from "./commands/command-settled.ts";
import { createDeadlineSweeper } from "./commands/deadline-sweeper.ts";
import type { CommandTimeoutConfig } from "./devices/timeouts.ts";
import { createAppliedSeqsPruner } from "./gateway-link/applied-seqs-pruner.ts";
import { createPhotoPruner } from "./photos/photo-retention.ts";
import { createConnectionWatch } from "./site-events/connection-watch.ts";
import type { Db } from "./store/db.ts";
import { startWebhookDelivery } from "./webhooks/webhook-delivery.ts";

/**
 * What the cloud process runs beside its requests, each safe beside other replicas: the command deadline
 * sweep, the pruning of outbox seqs and photos, the connection watch and webhook delivery.
 */
export function startBackgroundJobs(deps: {
  db: Db;
  clock: Clock;
  log: Logger;
  timeouts: CommandTimeoutConfig;
  settled: InProcessSettledNotifier;
}): { stop(): Promise<void> } {
  const { db, clock, log } = deps;
  const sweeper = createDeadlineSweeper({ db, clock, log, timeouts: deps.timeouts, settled: deps.settled });
  // Forgets the outbox seqs no gateway can send again (applied_seqs would otherwise grow for ever).
  const pruner = createAppliedSeqsPruner({ db, clock, log });
  // Deletes photos past their retention (30 days, 50 per device) and parts that never became a photo.
  const photoPruner = createPhotoPruner({ db, clock, log });
  // Health is derived from time: this turns its changes into connection site events (webhooks).
  const connections = createConnectionWatch({ db, clock, log });
  for (const job of [sweeper, pruner, photoPruner, connections]) job.start();
  // Sends the operators' webhooks from the durable queue (cloud/webhooks/).
  const webhooks = startWebhookDelivery({ db, clock, log });
  return {
    async stop() {
      for (const job of [sweeper, pruner, photoPruner, connections]) job.stop();
      await webhooks.stop();
    },
  };
}
