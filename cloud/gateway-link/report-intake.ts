import type { Logger } from "pino";
import type { DeviceStateReport } from "../../shared/wire/messages.ts";
import type { CommandTimeoutConfig } from "../devices/timeouts.ts";
import type { GatewayRefusal } from "../metrics.ts";
import { type Db, isPostgres } from "../store/db.ts";
import { applyUpMessage } from "./apply-up-message.ts";
import { applyReportBatch, type QueuedReport, type ReportOutcome } from "./report-batch.ts";

/** A batch at most this big: a fleet's first start offers thousands at once. */
const MAX_BATCH = 2_000;

type Waiting = QueuedReport & { resolve: (o: ReportOutcome) => void; reject: (err: unknown) => void };

export type ReportIntake = {
  /**
   * Applies a gateway's device report with those of other gateways that came meanwhile; resolves once
   * committed (only then may it be acknowledged), with what became of it.
   */
  apply(gatewayId: string, msg: DeviceStateReport, now: Date): Promise<"applied" | "duplicate">;
  /**
   * Whether reports are batched (PostgreSQL): a gateway's next may then be handed in before its previous is
   * applied. Otherwise (SQLite) each is applied as it comes, and its caller waits for it.
   */
  readonly batches: boolean;
};

/**
 * Device reports as a group commit, like heartbeats (heartbeat-intake.ts), but durable: while one batch
 * is written, reports that arrive wait and go together in the next, one transaction and one WAL flush for
 * all (report-batch.ts); a quiet cloud writes each at once. Each report is acknowledged by its caller only
 * after its batch committed. A batch that fails is applied again report by report, each in a transaction of
 * its own, so one that cannot be applied (or a deadlock no lock order foresaw) costs the others nothing.
 * SQLite applies each as it comes (one connection: a batch would save only the commit). A gateway's
 * reports are applied in the order handed in, without its caller waiting for one before the next: they go
 * in that order into a batch (stepped through in order there) or into later batches, written one after
 * another, and the one-by-one fallback keeps each gateway's order too.
 */
export function createReportIntake(
  db: Db,
  deps: {
    timeouts: CommandTimeoutConfig;
    log: Logger;
    refused?: (type: "device_state", reason: GatewayRefusal) => void;
  },
): ReportIntake {
  const { timeouts, log } = deps;
  const one = (r: QueuedReport) =>
    applyUpMessage(db, r.gatewayId, r.msg, {
      now: r.now,
      timeouts,
      log,
      refused: (_type, reason) => deps.refused?.("device_state", reason),
    });
  let queue: Waiting[] = [];
  let writing = false;

  async function writeAll(): Promise<void> {
    // Every report handed in within this turn of the event loop joins the first batch.
    await new Promise<void>((r) => setImmediate(r));
    while (queue.length > 0) {
      const batch = queue.slice(0, MAX_BATCH);
      queue = queue.slice(batch.length);
      await write(batch);
    }
    writing = false;
  }

  /** Each report in a transaction of its own: a gateway's in its order, gateways side by side. */
  async function oneByOne(batch: Waiting[]): Promise<void> {
    const byGateway = Map.groupBy(batch, (r) => r.gatewayId);
    await Promise.all(
      [...byGateway.values()].map(async (reports) => {
        for (const r of reports) await one(r).then(r.resolve, r.reject);
      }),
    );
  }

  async function write(batch: Waiting[]): Promise<void> {
    let outcomes: ReportOutcome[];
    try {
      outcomes = await applyReportBatch(db, batch, { timeouts, log });
    } catch (err) {
      log.warn({ err, reports: batch.length }, "a batch of device reports failed: applying them one by one");
      await oneByOne(batch);
      return;
    }
    batch.forEach((r, i) => {
      const outcome = outcomes[i] ?? "duplicate";
      if (outcome === "foreign_device") deps.refused?.("device_state", "foreign_device");
      r.resolve(outcome);
    });
  }

  return {
    batches: isPostgres(db),
    async apply(gatewayId, msg, now) {
      if (!isPostgres(db)) return one({ gatewayId, msg, now });
      const outcome = await new Promise<ReportOutcome>((resolve, reject) => {
        queue.push({ gatewayId, msg, now, resolve, reject });
        if (!writing) {
          writing = true;
          void writeAll();
        }
      });
      return outcome === "duplicate" ? "duplicate" : "applied";
    },
  };
}
