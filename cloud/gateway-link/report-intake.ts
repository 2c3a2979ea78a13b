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
};

/**
 * Device reports as a group commit, like heartbeats (heartbeat-intake.ts), but durable: while one batch
 * is written, reports that arrive wait and go together in the next, one transaction and one WAL flush for
 * all (report-batch.ts); a quiet cloud writes each at once. Each report is acknowledged by its caller only
 * after its batch committed. A batch that fails is applied again report by report, each in a transaction of
 * its own, so one that cannot be applied (or a deadlock no lock order foresaw) costs the others nothing.
 * SQLite applies each as it comes (one connection: a batch would save only the commit). Callers keep each
 * gateway's order by awaiting `apply` before its next message, so a batch holds one report per gateway.
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

  async function write(batch: Waiting[]): Promise<void> {
    let outcomes: ReportOutcome[];
    try {
      outcomes = await applyReportBatch(db, batch, { timeouts, log });
    } catch (err) {
      log.warn({ err, reports: batch.length }, "a batch of device reports failed: applying them one by one");
      await Promise.all(batch.map((r) => one(r).then(r.resolve, r.reject)));
      return;
    }
    batch.forEach((r, i) => {
      const outcome = outcomes[i] ?? "duplicate";
      if (outcome === "foreign_device") deps.refused?.("device_state", "foreign_device");
      r.resolve(outcome);
    });
  }

  return {
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
